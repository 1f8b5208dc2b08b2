# Cross build for an ARM64 Linux host on Debian (x86-64 build machine):
#   cmake -S . -B build/a64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# Needs g++-aarch64-linux-gnu, qemu-user and the :arm64 -dev packages
# (scripts/setup.sh --a64). Libraries and CMake packages come from Debian's
# multiarch folders (/usr/lib/aarch64-linux-gnu); ctest runs every test
# executable through qemu-aarch64 (CMAKE_CROSSCOMPILING_EMULATOR).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# Programs (ninja, pkg-config, the compilers) are the build machine's; headers,
# libraries and packages the target's: the cross sysroot first, then the
# multiarch folders of the :arm64 packages (searched through
# CMAKE_LIBRARY_ARCHITECTURE, so x86-64 libraries are never picked).
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# Only the target's .pc files (libxxhash).
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# The emulator loads the target's programs with the target root "/": the
# dynamic loader and every shared library then come from the :arm64 multiarch
# packages (/lib/ld-linux-aarch64.so.1, /lib/aarch64-linux-gnu), one glibc
# build. With -L /usr/aarch64-linux-gnu, qemu took the loader from the cross
# sysroot (libc6-arm64-cross) but libc.so.6 from the multiarch folder (the
# sysroot has no lib/aarch64-linux-gnu): two glibc builds whose private
# loader/libc interface differs, so the first pthread_create walked a
# never-initialised stack-cache list forever (every program that started a
# thread hung).
#
# GPURC_JIT_SINGLE_MAPPING: qemu-user notices code changes only through the
# address it translated, so JIT code is mapped once (RWX) under qemu instead
# of through separate RW / RX views (backend_common/exec_memory.cpp).
find_program(GPURC_QEMU_AARCH64 qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR /usr/bin/env GPURC_JIT_SINGLE_MAPPING=1 ${GPURC_QEMU_AARCH64} -L /)
