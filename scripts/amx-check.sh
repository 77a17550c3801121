# Sourced by install.sh (which scripts/test.sh runs) and build-llama-server.sh: whether
# llama.cpp's -march=native build carries its Intel AMX kernels. GCC honours an explicit
# -mno-* whatever -march=native says, so leaving them out is a compiler flag.
#
# They are left out unless EDGEDESK_AMX=1 asks for them and the CPU runs tile instructions:
# - Some virtual machines list amx_tile/amx_int8 in /proc/cpuinfo yet fault on tile
#   instructions; every decode would then die with SIGILL.
# - Where the tiles do run, llama.cpp's AMX matrix kernels (this version) crash with
#   SIGSEGV as soon as a prompt of more than one token is read with a Q4_K_M model
#   (ggml_backend_amx_mul_mat; seen on an Intel Xeon KVM guest whose tiles pass the
#   probe; llama.cpp issue 20824, closed without a fix). Without them the AVX-512 kernels
#   and weight repacking still run; docs/gpu.md has the figures.
#
# The probe is desktop/engine/_hardware/amx.py, the very one `edgedesk doctor` runs (AMX: ...);
# standard library only, run by its path before EdgeDesk is installed. It prints
# absent | usable | listed, not usable | listed, not checked.
AMX_PROBE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/desktop/engine/_hardware/amx.py"

amx_left_out() {  # 0 (with AMX_WHY set) when AMX must be left out of the build
  [ "$(uname -m)" = x86_64 ] || return 1  # AMX is x86-64's; -mno-amx-* is too
  local verdict
  verdict=$("${PYTHON:-python3}" -I "$AMX_PROBE" --why 2>/dev/null) || verdict=""
  if [ -z "$verdict" ]; then  # no Python to run it: where AMX is listed, assume the worst
    grep -qw amx_tile /proc/cpuinfo 2>/dev/null || return 1
    verdict=$'listed, not checked\nno Python to run desktop/engine/_hardware/amx.py'
  fi
  case "${verdict%%$'\n'*}" in absent) return 1 ;; esac  # -march=native adds none
  AMX_WHY="AMX: ${verdict%%$'\n'*} (${verdict#*$'\n'})"
  if [ "${verdict%%$'\n'*}" != usable ]; then
    AMX_WHY="$AMX_WHY; building llama.cpp without AMX"
    return 0
  fi
  if [ "${EDGEDESK_AMX:-}" = 1 ]; then
    echo "note: $AMX_WHY; EDGEDESK_AMX=1: building llama.cpp's AMX kernels" >&2
    return 1
  fi
  AMX_WHY="$AMX_WHY; building llama.cpp without its AMX kernels, which crash on this llama.cpp (EDGEDESK_AMX=1 builds them)"
  return 0
}

if amx_left_out; then
  NO_AMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  export CFLAGS="${CFLAGS:-} $NO_AMX" CXXFLAGS="${CXXFLAGS:-} $NO_AMX"
  echo "note: $AMX_WHY" >&2
fi
