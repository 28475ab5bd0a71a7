#!/usr/bin/env bash
# Best effort: the optional JPEG region decoder (headrace/_native) compiles against libjpeg-turbo's
# headers. When they are missing and apt-get is usable as root, install them, and say so on stderr
# (a test run must not change the system silently). Without them the build skips the extension and
# headrace decodes whole images. JPEGLIB_H names the header to look for (tests point it elsewhere).
set -uo pipefail
header="${JPEGLIB_H:-/usr/include/jpeglib.h}"
if [ -e "$header" ] || [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    exit 0
fi
say() { echo "scripts/system_deps.sh: $*" >&2; }
say "installing system package libjpeg62-turbo-dev with apt-get (no $header): the JPEG region decoder builds against it"
if { apt-get install -y -q libjpeg62-turbo-dev || { apt-get update -q && apt-get install -y -q libjpeg62-turbo-dev; }; } >/dev/null 2>&1; then
    exit 0
fi
say "libjpeg62-turbo-dev is not available; installing system package libjpeg-dev with apt-get instead"
if ! apt-get install -y -q libjpeg-dev >/dev/null 2>&1; then
    say "could not install libjpeg headers; headrace builds without its JPEG region decoder"
fi
exit 0
