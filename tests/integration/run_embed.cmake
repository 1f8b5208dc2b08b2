# ctest driver of tests/integration/emulator_embed: configures, builds and
# runs the example project against this build of gpurc.
#   -DMODE=install       cmake --install the build into WORK/prefix, then find_package(gpurc)
#   -DMODE=subdirectory  add_subdirectory(SOURCE_DIR): gpurc's library only
# Other -D: SOURCE_DIR, BINARY_DIR (gpurc's build), WORK (a scratch folder),
# GENERATOR, CXX, BUILD_TYPE and FLAGS (its CMAKE_CXX_FLAGS_<type>), SANITIZE, LAUNCHER (compiler launcher, e.g. ccache, so
# the subdirectory build reuses the objects of the main build).
cmake_minimum_required(VERSION 3.20)
foreach(v MODE SOURCE_DIR BINARY_DIR WORK GENERATOR CXX)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_embed.cmake: -D${v}=... missing")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " line "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${line}")
  endif()
endfunction()

set(args -G "${GENERATOR}" -DCMAKE_CXX_COMPILER=${CXX})
if(BUILD_TYPE)
  string(TOUPPER "${BUILD_TYPE}" bt)
  list(APPEND args -DCMAKE_BUILD_TYPE=${BUILD_TYPE} "-DCMAKE_CXX_FLAGS_${bt}=${FLAGS}")
endif()
if(LAUNCHER)
  list(APPEND args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
if(MODE STREQUAL "install")
  file(REMOVE_RECURSE "${WORK}/prefix")
  run(${CMAKE_COMMAND} --install "${BINARY_DIR}" --prefix "${WORK}/prefix")
  list(APPEND args "-DCMAKE_PREFIX_PATH=${WORK}/prefix")
  set(build "${WORK}/build")
elseif(MODE STREQUAL "subdirectory")
  list(APPEND args "-DGPURC_SOURCE=${SOURCE_DIR}")
  if(SANITIZE)
    list(APPEND args -DGPURC_SANITIZE=ON)
  endif()
  # WORK itself is the build folder: placed beside gpurc's own build, its
  # compile commands see the sources at the same relative paths, so ccache
  # (with CCACHE_BASEDIR) finds the objects gpurc's build made.
  set(build "${WORK}")
else()
  message(FATAL_ERROR "run_embed.cmake: MODE must be install or subdirectory")
endif()
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/integration/emulator_embed" -B "${build}" ${args})
run(${CMAKE_COMMAND} --build "${build}" -j2)
run("${build}/emulator_embed")
