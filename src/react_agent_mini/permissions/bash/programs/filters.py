"""Programs that filter, dump and check what they read: comm, fold, expand, unexpand, od, the checksum programs, and
nproc and sleep, which read nothing. GNU programs, so option lists are complete (unique prefixes of long options
are accepted; the test suite checks them against each installed program's `--help`)."""

from __future__ import annotations

from ..spec import Spec

_HELP = ("--help", "--version")
_CHECK = "-c --check +names # reads the files its checksum list names"
_DIGEST = ("-b --binary", _CHECK, "--tag", "-t --text", "-z --zero", "--ignore-missing", "--quiet", "--status",
           "--strict", "-w --warn")  # fmt: skip

SPECS: tuple[Spec, ...] = (
    Spec(
        "comm",
        abbrev=True,
        options=(
            *_HELP,
            "-1",
            "-2",
            "-3",
            "--check-order",
            "--nocheck-order",
            "--output-delimiter =text",
            "--total",
            "-z --zero-terminated",
        ),
        examples=("comm -12 a b", "comm -3 <(sort a) <(sort b)"),
    ),
    Spec(
        "fold",
        abbrev=True,
        options=(*_HELP, "-b --bytes", "-s --spaces", "-w --width =n"),
        examples=("fold -w 20 f", "fold -sw40 f"),
    ),
    Spec("expand", abbrev=True, options=(*_HELP, "-i --initial", "-t --tabs =text"), examples=("expand -t 4 f",)),
    Spec(
        "unexpand",
        abbrev=True,
        options=(*_HELP, "-a --all", "--first-only", "-t --tabs =text"),
        examples=("unexpand -a f",),
    ),
    Spec(
        "od",
        abbrev=True,
        options=(
            *_HELP,
            "-A --address-radix =text",
            "--endian =text",
            "-j --skip-bytes =text",
            "-N --read-bytes =text",
            "-S =n",
            "--strings ?n",
            "-t --format =text",
            "-v --output-duplicates",
            "-w ?n",
            "--width ?n",
            "--traditional",
            "-a",
            "-b",
            "-c",
            "-d",
            "-f",
            "-i",
            "-l",
            "-o",
            "-s",
            "-x",
        ),
        examples=("od -c f", "od -An -tx1 -N16 f"),
    ),
    Spec(
        "md5sum sha1sum sha224sum sha256sum sha384sum sha512sum",
        abbrev=True,
        options=(*_HELP, *_DIGEST),
        examples=("sha256sum f", "md5sum a b"),
    ),
    Spec("b2sum", abbrev=True, options=(*_HELP, *_DIGEST, "-l --length =n"), examples=("b2sum -l 256 f",)),
    Spec(
        "cksum",
        abbrev=True,
        options=(
            *_HELP,
            "-a --algorithm =text",
            _CHECK,
            "-l --length =n",
            "--tag",
            "--untagged",
            "-z --zero",
            "--ignore-missing",
            "--quiet",
            "--status",
            "--strict",
            "-w --warn",
            "--debug",
            "--base64",
            "--raw",
        ),
        examples=("cksum f", "cksum -a sha256 f"),
    ),
    Spec("nproc", abbrev=True, options=(*_HELP, "--all", "--ignore =n"), operands="", examples=("nproc",)),
    Spec("sleep", abbrev=True, options=_HELP, operands="text*", examples=("sleep 1", "sleep 0.5")),
)
