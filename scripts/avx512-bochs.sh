#!/usr/bin/env bash
# Runs commands on gpurc's AVX-512 tier on a machine without AVX-512: boots a
# Debian kernel with a small initramfs (busybox, the build's binaries and the
# shared libraries they need, the source tree's data) inside the Bochs x86-64
# emulator with an AVX-512 CPU model, runs the commands one after the other,
# prints the guest's serial console and returns 0 only when every command
# exited with 0. A developer tool, not part of CI (Bochs runs code about two
# orders of magnitude slower than the host): docs/testing.md, "Running the
# AVX-512 tier without AVX-512 hardware (Bochs)".
#
#   scripts/avx512-bochs.sh [options] BUILD_DIR [-c COMMAND]... [-f FILE]
#
#   BUILD_DIR     a build of gpurc (e.g. build/release): the commands run in it
#                 with it first on PATH; every executable of it that a command
#                 names is copied into the guest at the same path
#   -c COMMAND    a shell command for the guest (repeatable; run in order)
#   -f FILE       commands from FILE, one a line ('#' lines and blank lines skipped)
#   --cpu MODEL   Bochs CPU model (default corei7_skylake_x: AVX-512 F, CD,
#                 BW, DQ, VL; the one these runs used)
#   --mem MIB     guest memory, at most 2048 (default 2048)
#   --ips N       emulated instructions per guest second (default 100000000;
#                 only sets how guest time relates to instructions)
#   --timeout S   stop Bochs after S seconds of host time (default: none)
#   --work DIR    where the kernel, the image and the logs go
#                 (default ${TMPDIR:-/tmp}/gpurc-avx512-bochs)
#   --bochs PATH  the Bochs binary (default: WORK/bochs/bin/bochs, built by
#                 this script from Bochs 3.0 with the fix below; 'debian' for
#                 Debian's bochs-bin, whose gathers fail, see the docs)
#   --env K=V     set an environment variable in the guest (repeatable)
#   --add PATH    copy a file or folder into the guest at the same path
#                 (executables with the libraries they load; repeatable)
#
# In the guest, `export_files PATH...` (a shell function the commands can
# call) copies files or folders out: they land in WORK/export/ on the host.
# Every command's line in the log is followed by its exit status, its time in
# the guest, its wall time on the host and the CPU time Bochs spent on it
# ("=== [N] status=S guest_s=G host_s=H bochs_cpu_s=C"). Guest time is not
# a measure of anything: Linux calibrates the clock from an emulated TSC.
set -euo pipefail

cpu=corei7_skylake_x
mem=2048
ips=100000000
timeout_s=0
work="${TMPDIR:-/tmp}/gpurc-avx512-bochs"
build=""
cmds=()
envs=()
adds=()
bochs=""
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu) cpu="$2"; shift 2 ;;
    --mem) mem="$2"; shift 2 ;;
    --ips) ips="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    --bochs) bochs="$2"; shift 2 ;;
    --add) adds+=("$(realpath "$2")"); shift 2 ;;
    -c) cmds+=("$2"); shift 2 ;;
    -f) while IFS= read -r line || [ -n "$line" ]; do
          case "$line" in ''|'#'*) ;; *) cmds+=("$line") ;; esac
        done < "$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "avx512-bochs: unknown option $1" >&2; exit 2 ;;
    *) [ -z "$build" ] || { echo "avx512-bochs: one build folder only" >&2; exit 2; }
       build="$1"; shift ;;
  esac
done
[ -n "$build" ] && [ -d "$build" ] || { echo "avx512-bochs: give a build folder (see --help)" >&2; exit 2; }
[ "${#cmds[@]}" -gt 0 ] || { echo "avx512-bochs: no commands (-c or -f)" >&2; exit 2; }
[ "$mem" -le 2048 ] || { echo "avx512-bochs: at most 2048 MiB (Bochs' host memory limit)" >&2; exit 2; }
build="$(cd "$build" && pwd)"
src="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null || true)"
shared="$(sed -n 's/^GPURC_SHARED_DIR:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)"

# --- the packages ----------------------------------------------------------------
packages=(isolinux syslinux-common xorriso busybox-static cpio)
if [ "$bochs" = debian ]; then packages+=(bochs bochsbios vgabios)
elif [ -z "$bochs" ]; then packages+=(git g++ make); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "avx512-bochs: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

mkdir -p "$work"
work="$(cd "$work" && pwd)"

# --- Bochs ---------------------------------------------------------------------------
# Bochs (2.7 to 3.0 at least) raises #UD for an EVEX gather or scatter whose
# index register is zmm16-zmm31: the decoder moves EVEX.V' into the VSIB index
# but then also counts it as a vvvv operand the instruction does not have.
# gpurc's AVX-512 tier allocates zmm16-31, so this script builds Bochs 3.0 with
# that one line fixed (once, into WORK/bochs; about 15 minutes on 2 busy cores).
bochs_git="${BOCHS_GIT:-https://github.com/bochs-emu/Bochs.git}"
if [ -z "$bochs" ]; then
  bochs="$work/bochs/bin/bochs"
  if [ ! -x "$bochs" ]; then
    echo "avx512-bochs: building Bochs 3.0 (with the VSIB fix) into $work/bochs"
    rm -rf "$work/bochs-src"
    git -c advice.detachedHead=false clone -q --depth 1 --branch REL_3_0_FINAL "$bochs_git" "$work/bochs-src"
    f="$work/bochs-src/bochs/cpu/decoder/fetchdecode32.cc"
    grep -q 'i->setSibIndex(i->sibIndex() | (vvv & 0x10));' "$f" \
      || { echo "avx512-bochs: the VSIB line to fix is not in $f" >&2; exit 2; }
    sed -i 's/^\( *\)i->setSibIndex(i->sibIndex() | (vvv \& 0x10));/&\n\1vvv \&= ~0x10u; \/\/ V'"'"' was the index, not a vvvv operand/' "$f"
    (cd "$work/bochs-src/bochs" \
      && ./configure -q --prefix="$work/bochs" --enable-x86-64 --enable-cpu-level=6 --enable-avx \
           --enable-evex --enable-all-optimizations --enable-pci --enable-cdrom --with-nogui \
           --disable-debugger --disable-plugins --enable-usb=no > "$work/bochs-build.log" 2>&1 \
      && make -j"$(nproc)" >> "$work/bochs-build.log" 2>&1 \
      && make install >> "$work/bochs-build.log" 2>&1) \
      || { echo "avx512-bochs: building Bochs failed: $work/bochs-build.log" >&2; exit 2; }
  fi
fi
if [ "$bochs" = debian ]; then
  bochs=bochs-bin
  bios=/usr/share/bochs/BIOS-bochs-latest vgabios=/usr/share/vgabios/vgabios.bin
  display='rfb, options="timeout=0"'
  # Debian's bochs-bin has the internal debugger: it waits for a command first.
  debugger=(-rc "$work/debugger.rc")
else
  share="$(dirname "$(dirname "$bochs")")/share/bochs"
  [ -d "$share" ] || share="$(dirname "$bochs")/bios"
  bios="$share/BIOS-bochs-latest" vgabios="$share/VGABIOS-lgpl-latest.bin"
  [ -f "$vgabios" ] || vgabios="$share/VGABIOS-lgpl-latest"
  display=nogui
  debugger=()
fi

# --- the kernel: Debian's cloud flavour (few drivers to probe: boots faster) --
kernel="$work/kernel/vmlinuz"
if [ ! -f "$kernel" ]; then
  pkg="$(apt-cache search --names-only '^linux-image-[0-9.]+-[0-9]+-cloud-amd64-unsigned$' \
         | awk '{print $1}' | sort -V | tail -1)"
  [ -n "$pkg" ] || { echo "avx512-bochs: no linux-image-*-cloud-amd64-unsigned package found" >&2; exit 2; }
  echo "avx512-bochs: downloading $pkg"
  rm -rf "$work/kernel" && mkdir -p "$work/kernel/deb"
  (cd "$work/kernel/deb" && apt-get download "$pkg" >/dev/null 2>&1)
  dpkg-deb -x "$work/kernel/deb/"*.deb "$work/kernel/x"
  cp "$work/kernel/x/boot/"vmlinuz-* "$kernel"
  rm -rf "$work/kernel/x" "$work/kernel/deb"
fi

# --- the initramfs -------------------------------------------------------------
root="$work/root"
rm -rf "$root" "$work/iso" "$work/export"
mkdir -p "$root"/{bin,proc,sys,dev,tmp,etc} "$work/iso/isolinux" "$work/export"
cp /bin/busybox "$root/bin/busybox"
copy_with_libs() {  # an executable and what ldd says it loads, at the same paths
  local f="$1" lib
  mkdir -p "$root$(dirname "$f")"
  cp -L "$f" "$root$f"
  for lib in $(ldd "$f" | awk '/=> \//{print $3} /^\t\//{print $1}'); do
    [ -e "$root$lib" ] && continue
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
}
# The executables of the build folder that a command names.
shopt -s nullglob
for exe in "$build"/*; do
  [ -f "$exe" ] && [ -x "$exe" ] || continue
  name="$(basename "$exe")"
  for c in "${cmds[@]}"; do
    if printf '%s\n' "$c" | grep -qE "(^|[^A-Za-z0-9_./-])(\./|$build/)?$name([^A-Za-z0-9_.-]|$)"; then
      copy_with_libs "$exe"; break
    fi
  done
done
# The lib64 loader path the binaries name, if ldd printed it under /lib64 only.
[ -e "$root/lib64/ld-linux-x86-64.so.2" ] || { mkdir -p "$root/lib64"; cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"; }
# The source tree's data (tests read it through GPURC_TEST_DATA / GPURC_SOURCE_DIR)
# and the shared reference folder, at their host paths; no build folders, no .git.
if [ -n "$src" ] && [ -d "$src" ]; then
  mkdir -p "$root$src"
  (cd "$src" && tar cf - --exclude='./build*' --exclude=./.git --exclude='./fuzz-out*' .) | (cd "$root$src" && tar xf -)
fi
if [ -n "$shared" ] && [ -d "$shared" ]; then
  mkdir -p "$root$shared"
  (cd "$shared" && tar cf - .) | (cd "$root$shared" && tar xf -)
fi
mkdir -p "$root$build"
for a in "${adds[@]}"; do
  if [ -f "$a" ] && [ -x "$a" ]; then copy_with_libs "$a"
  else mkdir -p "$root$(dirname "$a")"; cp -a "$a" "$root$a"; fi
done

{
  echo '#!/bin/busybox sh'
  echo '/bin/busybox --install -s /bin'
  echo 'mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev'
  echo 'mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm'
  echo "export PATH='$build':/bin HOME=/tmp"
  for e in "${envs[@]}"; do printf 'export %q\n' "$e"; done
  cat <<'EOF'
export_files() {  # copies files out through the console: WORK/export on the host
  echo "=== export begin"
  tar cf - "$@" 2>/dev/null | gzip | base64
  echo "=== export end"
}
uptime_cs() { awk '{ split($1, a, "."); print a[1] * 100 + a[2] }' /proc/uptime; }
echo "=== guest: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2)"
echo "=== guest flags:$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx|xsave)' | tr '\n' ' ')"
echo "=== guest memory: $(awk '/MemTotal/ {print $2, $3}' /proc/meminfo)"
n=0
EOF
  echo "cd '$build'"
  i=0
  for c in "${cmds[@]}"; do
    i=$((i + 1))
    printf 'echo %q\n' "=== [$i] \$ $c"
    echo 'dmesg -c >/dev/null; t0=$(uptime_cs)'
    printf '( %s ) </dev/null 2>&1\n' "$c"
    echo 'rc=$?; t1=$(uptime_cs)'
    # A crash: the kernel's report (print_fatal_signals: the registers and the code bytes at rip).
    echo '[ $rc -ge 128 ] && dmesg'
    printf 'echo "=== [%d] status=$rc guest_s=$(( (t1 - t0) / 100 )).$(printf %%02d $(( (t1 - t0) %% 100 )))"\n' "$i"
  done
  echo 'echo "=== all done"'
  echo 'sync; sleep 1; poweroff -f'
} > "$root/init"
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet) > "$work/iso/initrd.cpio"

# --- the boot image: isolinux, the kernel, the initramfs -----------------------
cp "$kernel" "$work/iso/vmlinuz"
cp /usr/lib/ISOLINUX/isolinux.bin "$work/iso/isolinux/"
cp /usr/lib/syslinux/modules/bios/ldlinux.c32 "$work/iso/isolinux/"
# Bochs 2.7 reports XSAVES/XSAVEC sizes (CPUID 0xD, 1) for the standard format,
# not the compacted one: Linux then finds the sizes inconsistent and turns
# XSAVE, and with it AVX and AVX-512, off. clearcpuid=321,323 (XSAVEC,
# XSAVES) makes it use the standard format.
append="console=ttyS0,115200 rdinit=/init mitigations=off clearcpuid=321,323 loglevel=4 print_fatal_signals=1"
cat > "$work/iso/isolinux/isolinux.cfg" <<EOF
DEFAULT linux
PROMPT 0
TIMEOUT 0
LABEL linux
  KERNEL /vmlinuz
  INITRD /initrd.cpio
  APPEND $append
EOF
xorriso -as mkisofs -quiet -o "$work/boot.iso" -b isolinux/isolinux.bin -c isolinux/boot.cat \
  -no-emul-boot -boot-load-size 4 -boot-info-table "$work/iso" 2>/dev/null

cat > "$work/bochsrc" <<EOF
memory: guest=$mem, host=$mem
cpu: model=$cpu, count=1, ips=$ips, reset_on_triple_fault=0
romimage: file=$bios
vgaromimage: file=$vgabios
ata0-master: type=cdrom, path=$work/boot.iso, status=inserted
boot: cdrom
display_library: $display
com1: enabled=1, mode=file, dev=$work/serial.log
clock: sync=none, time0=local
mouse: enabled=0
log: $work/bochs.log
panic: action=fatal
error: action=report
info: action=ignore
debug: action=ignore
EOF
printf 'c\nquit\n' > "$work/debugger.rc"

# --- run -------------------------------------------------------------------------
echo "avx512-bochs: booting ($cpu, $mem MiB, $(du -m "$work/iso/initrd.cpio" | cut -f1) MiB initramfs); log $work/serial.log"
rm -f "$work/serial.log"; : > "$work/serial.log"
start=$(date +%s)
if [ "$timeout_s" -gt 0 ]; then
  timeout "$timeout_s" "$bochs" -q -f "$work/bochsrc" "${debugger[@]}" > "$work/bochs.out" 2>&1 < /dev/null &
else
  "$bochs" -q -f "$work/bochsrc" "${debugger[@]}" > "$work/bochs.out" 2>&1 < /dev/null &
fi
bpid=$!
# Bochs' CPU time (user + system, s) so far: on a busy machine its wall time says less.
tck=$(getconf CLK_TCK)
bochs_cpu() {  # $bpid is Bochs or, with --timeout, its parent
  cat /proc/[0-9]*/stat 2>/dev/null | awk -v p="$bpid" -v t="$tck" \
    '$1 == p || $4 == p { s += $14 + $15 } END { printf "%.0f", s / t }'
}
cmd_start=$start cmd_cpu=0
tail -n +1 -F --pid=$bpid "$work/serial.log" 2>/dev/null | while IFS= read -r line; do
  line="${line%$'\r'}"; now=$(date +%s)
  case "$line" in
    "=== export begin"*|"=== export end"*) echo "$line" ;;
    "=== ["*"] \$ "*) cmd_start=$now; cmd_cpu=$(bochs_cpu); echo "$line" ;;
    "=== ["*"] status="*) echo "$line host_s=$((now - cmd_start)) bochs_cpu_s=$(( $(bochs_cpu) - cmd_cpu ))" ;;
    "=== all done"*) echo "$line (host $((now - start)) s, Bochs CPU $(bochs_cpu) s in all)" ;;
    *) [ "${in_export:-0}" = 1 ] || echo "$line" ;;
  esac
  case "$line" in "=== export begin"*) in_export=1 ;; "=== export end"*) in_export=0 ;; esac
done
wait $bpid || true
echo "avx512-bochs: Bochs ran $(( $(date +%s) - start )) s"

# Files the commands exported.
awk -v dir="$work/export" '
  /^=== export begin/ { n++; f = sprintf("%s/export-%d.tar.gz.b64", dir, n); on = 1; next }
  /^=== export end/ { on = 0; close(f); next }
  on { sub(/\r$/, ""); print > f }' "$work/serial.log"
for b in "$work/export"/*.b64; do
  [ -f "$b" ] || continue
  base64 -d "$b" | tar xzf - -C "$work/export" && rm -f "$b"
  echo "avx512-bochs: exported files in $work/export"
done

if ! grep -q '^=== all done' "$work/serial.log"; then
  echo "avx512-bochs: the guest did not finish (Bochs: $(grep -m1 -A1 'exiting with' "$work/bochs.out" | tail -1))" >&2
  exit 2
fi
if ! grep -q '^=== guest flags:.*avx512f' "$work/serial.log"; then
  echo "avx512-bochs: the guest kernel did not enable AVX-512" >&2
  exit 2
fi
failed=$(grep -c '^=== \[[0-9]*\] status=[1-9]' "$work/serial.log" || true)
echo "avx512-bochs: ${#cmds[@]} commands, $failed failed"
[ "$failed" = 0 ]
