# Sourced by install.sh and test.sh: leave Intel AMX out of llama.cpp's -march=native
# build when the CPU advertises AMX but cannot run it. Some virtual machines list
# amx_tile/amx_int8 in /proc/cpuinfo yet fault on the first tile instruction, and every
# decode then dies with SIGILL. A real AMX machine keeps it (a large CPU prefill gain).
# GCC honours an explicit -mno-* whatever -march=native says.
amx_unusable() {
  [ "$(uname -m)" = x86_64 ] && grep -qw amx_tile /proc/cpuinfo 2>/dev/null || return 1
  command -v cc >/dev/null || return 0  # cannot try it: assume the worst, the build is safe
  local dir rc
  dir=$(mktemp -d)
  cat >"$dir/amx.c" <<'C'
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void) {
  /* Linux hands out the tile state only on request (ARCH_REQ_XCOMP_PERM, XTILEDATA). */
  if (syscall(SYS_arch_prctl, 0x1023, 18) != 0) return 2;
  _tile_zero(0);
  return 0;
}
C
  if cc -O0 -mamx-tile "$dir/amx.c" -o "$dir/amx" 2>/dev/null; then
    { "$dir/amx"; } >/dev/null 2>&1; rc=$?
  else
    rc=1
  fi
  rm -rf "$dir"
  [ "$rc" -ne 0 ]
}

if amx_unusable; then
  NO_AMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  export CFLAGS="${CFLAGS:-} $NO_AMX" CXXFLAGS="${CXXFLAGS:-} $NO_AMX"
  echo "note: this CPU lists AMX but cannot run it here; building llama.cpp without AMX" >&2
fi
