# The ctest run's scratch folder (tests/CMakeLists.txt): cmake -DDIR=<folder> -DSTEP=setup|cleanup -P scratch.cmake
#   setup:   an empty folder (a previous run's leftovers removed);
#   cleanup: fails naming every entry left in it — a failed test's kept folder, or a file a test
#            did not write under its scratch folder — else removes it.
if(NOT DIR OR NOT STEP)
  message(FATAL_ERROR "scratch.cmake: expected -DDIR=<folder> -DSTEP=setup|cleanup")
endif()
if(STEP STREQUAL "setup")
  file(REMOVE_RECURSE "${DIR}")
  file(MAKE_DIRECTORY "${DIR}")
elseif(STEP STREQUAL "cleanup")
  file(GLOB left RELATIVE "${DIR}" "${DIR}/*")
  if(left)
    list(JOIN left "\n  " names)
    message(FATAL_ERROR "the tests left these in the scratch folder ${DIR} (a failed test's folder is kept for a "
                        "look; anything else is a file a test did not remove):\n  ${names}")
  endif()
  file(REMOVE_RECURSE "${DIR}")
else()
  message(FATAL_ERROR "scratch.cmake: STEP must be setup or cleanup, found '${STEP}'")
endif()
