#!/bin/sh
# The one build script for stormwatch: configures and builds a CMake build
# directory, then optionally installs the binary under a prefix. The
# Makefile, CI and docker/Dockerfile all call it, so the binary in the image
# is built exactly like the one the tests ran against.
#
# Usage: scripts/build.sh [OPTIONS] [-- EXTRA_CMAKE_ARGS...]
#   -B, --build-dir DIR   build directory (default: $BUILD_DIR or "build")
#   -t, --type TYPE       CMAKE_BUILD_TYPE: RelWithDebInfo (default; what the
#                         tests run; keeps assertions), Release, Debug or
#                         MinSizeRel (default: $BUILD_TYPE)
#   -j, --jobs N          parallel build jobs (default: $JOBS or nproc)
#   --target T            build only target T (repeatable; default: all)
#   --prefix DIR          after building, install the binary as DIR/bin/stormwatch
#   --strip               strip the installed binary (with --prefix; keeps a
#                         DIR/lib/debug/stormwatch.debug companion unless
#                         --no-debug-file)
#   --no-debug-file       with --strip: do not keep the separate debug file
#   -h, --help            show this help
# Anything after "--" is passed to the configure step, e.g.
#   scripts/build.sh -B build-asan -t Debug -- -DSW_SANITIZE=ON
# Environment: CMAKE (default cmake), STRIP (default strip), OBJCOPY
# (default objcopy), BUILD_DIR, BUILD_TYPE, JOBS, SW_CCACHE (auto: compile
# through ccache when it is installed; 0: never; 1: required).
# With ccache, a second clone (or a clean build directory) compiles from the
# cache: CCACHE_BASEDIR is the repository root and CCACHE_NOHASHDIR is set
# (unless already set), so that objects are shared across clones in other
# directories (their debug info may then name the clone that compiled them
# first); the same environment reaches the builds the tests make (the fuzz
# tree, the .deb build, older releases) through CMAKE_C_COMPILER_LAUNCHER.
# Exit status: 0 ok, 1 build failure, 2 usage error.
set -eu

usage() { sed -n '2,/^set -eu$/p' "$0" | sed -e '/^set -eu$/d' -e 's/^# \{0,1\}//'; }
die_usage() { echo "build.sh: $*" >&2; echo "Run 'scripts/build.sh --help' for usage." >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-build}
build_type=${BUILD_TYPE:-RelWithDebInfo}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
cmake=${CMAKE:-cmake}
strip_bin=${STRIP:-strip}
objcopy_bin=${OBJCOPY:-objcopy}
prefix=""
do_strip=0
debug_file=1
targets=""

while [ $# -gt 0 ]; do
  case "$1" in
    -B|--build-dir) [ $# -ge 2 ] || die_usage "$1 needs a value"; build_dir=$2; shift 2 ;;
    --build-dir=*) build_dir=${1#*=}; shift ;;
    -t|--type) [ $# -ge 2 ] || die_usage "$1 needs a value"; build_type=$2; shift 2 ;;
    --type=*) build_type=${1#*=}; shift ;;
    -j|--jobs) [ $# -ge 2 ] || die_usage "$1 needs a value"; jobs=$2; shift 2 ;;
    --jobs=*) jobs=${1#*=}; shift ;;
    --target) [ $# -ge 2 ] || die_usage "$1 needs a value"; targets="$targets $2"; shift 2 ;;
    --target=*) targets="$targets ${1#*=}"; shift ;;
    --prefix) [ $# -ge 2 ] || die_usage "$1 needs a value"; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --strip) do_strip=1; shift ;;
    --no-debug-file) debug_file=0; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    *) die_usage "unknown argument '$1'" ;;
  esac
done

case "$build_type" in
  RelWithDebInfo|Release|Debug|MinSizeRel) ;;
  *) die_usage "unknown build type '$build_type' (RelWithDebInfo, Release, Debug or MinSizeRel)" ;;
esac
case "$jobs" in
  ''|*[!0-9]*|0) die_usage "--jobs needs a positive integer, not '$jobs'" ;;
esac
[ "$do_strip" -eq 0 ] || [ -n "$prefix" ] || die_usage "--strip needs --prefix"
[ -n "$prefix" ] && [ -z "${prefix%%-*}" ] && die_usage "--prefix '$prefix' looks like an option"

# A relative build directory is relative to the repository root, wherever
# the script is called from (make, CI and the Dockerfile all agree).
case "$build_dir" in
  /*) ;;
  *) build_dir="$root/$build_dir" ;;
esac

# ccache (scripts/install-deps.sh installs it): a compiler launcher.
launcher=""
case "${SW_CCACHE:-auto}" in
  0|no|off) ;;
  *)
    if command -v ccache >/dev/null 2>&1; then
      # The settings go into the launcher itself (a CMake list), so that a
      # plain `cmake --build` of this directory compiles the same way.
      launcher="env;CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root};CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true};ccache"
    elif [ "${SW_CCACHE:-auto}" != auto ]; then
      echo "build.sh: SW_CCACHE=${SW_CCACHE} but ccache is not installed" >&2
      exit 1
    fi ;;
esac

echo "build.sh: configuring $build_dir ($build_type${launcher:+, through ccache})"
# Re-running configure is cheap and picks up a changed build type (and
# ccache installed or removed since).
"$cmake" -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE="$build_type" \
  -DCMAKE_C_COMPILER_LAUNCHER="$launcher" "$@" || exit 1

echo "build.sh: building with $jobs jobs${targets:+ (targets:$targets)}"
if [ -n "$targets" ]; then
  for t in $targets; do
    "$cmake" --build "$build_dir" -j "$jobs" --target "$t" || exit 1
  done
else
  "$cmake" --build "$build_dir" -j "$jobs" || exit 1
fi

[ -n "$prefix" ] || exit 0

bin="$build_dir/stormwatch"
[ -x "$bin" ] || { echo "build.sh: $bin was not built (missing --target stormwatch?)" >&2; exit 1; }
# The project has no CMake install() rules; installing the single binary by
# hand keeps the layout explicit: PREFIX/bin/stormwatch.
mkdir -p "$prefix/bin" || exit 1
dest="$prefix/bin/stormwatch"
cp "$bin" "$dest.tmp" && chmod 0755 "$dest.tmp" || exit 1
if [ "$do_strip" -eq 1 ]; then
  if [ "$debug_file" -eq 1 ]; then
    mkdir -p "$prefix/lib/debug" || exit 1
    "$objcopy_bin" --only-keep-debug "$dest.tmp" "$prefix/lib/debug/stormwatch.debug" || exit 1
    "$strip_bin" --strip-unneeded "$dest.tmp" || exit 1
    # gdb finds the symbols again through the debug link (and the build id).
    "$objcopy_bin" --add-gnu-debuglink="$prefix/lib/debug/stormwatch.debug" "$dest.tmp" || exit 1
  else
    "$strip_bin" --strip-unneeded "$dest.tmp" || exit 1
  fi
fi
mv -f "$dest.tmp" "$dest" || exit 1
echo "build.sh: installed $dest"
