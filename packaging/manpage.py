"""Writes stepformer's man page (roff, gzip-compressed) from the program's own help text, so that
the page says what the built binary says:

  python3 packaging/manpage.py STEPFORMER OUT.1.gz VERSION

SYNOPSIS is `stepformer help`; COMMANDS holds `stepformer help <command>` for every command that
`stepformer help` lists, each set as the program prints it (no-fill). Non-ASCII characters become
groff's \\[uXXXX] escapes, so the page reads the same in any locale.
"""
import gzip
import os
import re
import subprocess
import sys


def run(exe, *args):
    p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        sys.exit(f"manpage: '{exe} {' '.join(args)}' exited {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def roff_text(text):
    """Text as roff input lines: backslashes, leading dots and quotes, minus signs, non-ASCII."""
    out = []
    for line in text.rstrip("\n").split("\n"):
        line = line.replace("\\", "\\e").replace("-", "\\-")
        line = "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in line)
        if line.startswith((".", "'")):
            line = "\\&" + line
        out.append(line)
    return "\n".join(out)


def preformatted(text):
    return ".nf\n" + roff_text(text) + "\n.fi\n"


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: manpage.py STEPFORMER OUT.1.gz VERSION")
    exe, out, version = sys.argv[1:]
    overview = run(exe, "help")
    title, _, usage = overview.partition("\n")
    commands = []
    for m in re.finditer(r"^  stepformer ([a-z][a-z0-9-]*)\b", usage, re.M):
        if m.group(1) not in commands:
            commands.append(m.group(1))
    if not commands:
        sys.exit("manpage: 'stepformer help' lists no command")
    name = title.split("\u2014", 1)[-1].strip() if "\u2014" in title else title.strip()

    page = [
        f'.TH STEPFORMER 1 "" "stepformer {version}" "User Commands"',
        ".SH NAME",
        "stepformer \\- " + roff_text(name),
        ".SH SYNOPSIS",
        preformatted(usage.strip("\n")),
        ".SH DESCRIPTION",
        "With no command (or only the explorer's options) stepformer opens the explorer, a window that "
        "steps through a Transformer one stage and one token at a time; with a command it runs that "
        "command-line tool. Results go to standard output, messages to standard error.",
        ".SH COMMANDS",
    ]
    for c in commands:
        page += [f".SS {c}", preformatted(run(exe, "help", c))]
    page += [
        ".SH FILES",
        ".TP",
        ".I <prefix>/share/stepformer/assets/models",
        "The shipped models, found next to the installed binary; a model argument may name one "
        "(\\fBcopy\\-preln\\fR) or its path as the examples write it (\\fBassets/models/copy\\-preln.safetensors\\fR).",
        ".TP",
        ".I <prefix>/share/stepformer/shaders",
        "The explorer's heatmap shaders.",
        ".TP",
        ".I $XDG_CONFIG_HOME/stepformer/imgui.ini",
        "The explorer's window layout and settings (\\fI~/.config/stepformer/imgui.ini\\fR when "
        "XDG_CONFIG_HOME is not set).",
        ".SH ENVIRONMENT",
        ".TP",
        ".B STEPFORMER_HOME",
        "A folder searched first for \\fIassets/\\fR and \\fIshaders/\\fR.",
        "",
    ]
    text = "\n".join(page)
    # A fixed time stamp in the gzip header: the same page gives the same bytes (reproducible builds).
    with open(out + ".tmp", "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, compresslevel=9, mtime=0) as g:
            g.write(text.encode("ascii"))
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
