# The ctest bifrost_table_sync: the committed encoding table
# (frontend/bifrost/isa_table.inc) must come from Mesa's ISA.xml as the shared
# reference folder holds it (-DXML=../shared/reference/bifrost-ISA.xml): the converter records the XML's SHA-256
# in the table, and this recomputes it. (test_bifrost also compares every
# encoding's name, mask and exact bits with the XML.) On a mismatch,
# regenerate: python3 frontend/bifrost/tools/gen_isa_table.py
#   ../shared/reference/bifrost-ISA.xml > frontend/bifrost/isa_table.inc
#   cmake -DSOURCE_DIR=<repo> -DXML=<xml> -P frontend/bifrost/tools/check_table.cmake
if(NOT EXISTS "${XML}")
  message(FATAL_ERROR "bifrost: ISA.xml not found at '${XML}' (the shared reference folder beside the repository; set GPURC_SHARED_DIR)")
endif()
file(SHA256 "${XML}" xml_hash)
file(STRINGS "${SOURCE_DIR}/frontend/bifrost/isa_table.inc" recorded REGEX "^xml-sha256 ")
string(REPLACE "xml-sha256 " "" recorded "${recorded}")
if(NOT recorded STREQUAL xml_hash)
  message(FATAL_ERROR "bifrost: isa_table.inc was generated from another ISA.xml (table ${recorded}, xml ${xml_hash}); regenerate it with frontend/bifrost/tools/gen_isa_table.py")
endif()
message(STATUS "bifrost: isa_table.inc matches ISA.xml (${xml_hash})")
