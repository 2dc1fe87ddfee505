#include <gtest/gtest.h>
#include "positional_encoding.h"
TEST(Smoke, PeZero) { EXPECT_FLOAT_EQ(sf::pe_value(0, 1, 8), 1.0f); }
