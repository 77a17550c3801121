# Sourced by install.sh, test.sh and build-llama-server.sh: leave Intel AMX out of
# llama.cpp's -march=native build when the CPU advertises AMX but cannot run it. Some
# virtual machines list amx_tile/amx_int8 in /proc/cpuinfo yet fault on tile
# instructions, and every decode then dies with SIGILL. A real AMX machine keeps it (a
# large CPU prefill gain). GCC honours an explicit -mno-* whatever -march=native says.
#
# The probe is desktop/engine/hardware/amx.py, the very one `edgedesk doctor` runs (AMX: ...);
# standard library only, run by its path before EdgeDesk is installed. It prints
# absent | usable | listed, not usable | listed, not checked.
AMX_PROBE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/desktop/engine/hardware/amx.py"

amx_unusable() {
  [ "$(uname -m)" = x86_64 ] || return 1  # AMX is x86-64's; -mno-amx-* is too
  AMX_VERDICT=$("${PYTHON:-python3}" -I "$AMX_PROBE" --why 2>/dev/null) || AMX_VERDICT=""
  case "${AMX_VERDICT%%$'\n'*}" in
    absent | usable) return 1 ;;
    "") # no Python to run it: assume the worst where AMX is listed (the build is safe)
      grep -qw amx_tile /proc/cpuinfo 2>/dev/null || return 1
      AMX_VERDICT=$'listed, not checked\nno Python to run desktop/engine/hardware/amx.py' ;;
  esac
  return 0
}

if amx_unusable; then
  NO_AMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  export CFLAGS="${CFLAGS:-} $NO_AMX" CXXFLAGS="${CXXFLAGS:-} $NO_AMX"
  echo "note: AMX: ${AMX_VERDICT%%$'\n'*} (${AMX_VERDICT#*$'\n'}); building llama.cpp without AMX" >&2
fi
