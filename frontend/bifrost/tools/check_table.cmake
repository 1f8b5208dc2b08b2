# The ctest bifrost_table_sync: the committed encoding table
# (frontend/bifrost/isa_table.inc) must come from the committed ISA.xml
# (frontend/bifrost/data/ISA.xml): the converter records the XML's SHA-256
# in the table, and this recomputes it. (test_bifrost also compares every
# encoding's name, mask and exact bits with the XML.) On a mismatch,
# regenerate: python3 frontend/bifrost/tools/gen_isa_table.py
#   frontend/bifrost/data/ISA.xml > frontend/bifrost/isa_table.inc
#   cmake -DSOURCE_DIR=<repo> -P frontend/bifrost/tools/check_table.cmake
file(SHA256 "${SOURCE_DIR}/frontend/bifrost/data/ISA.xml" xml_hash)
file(STRINGS "${SOURCE_DIR}/frontend/bifrost/isa_table.inc" recorded REGEX "^xml-sha256 ")
string(REPLACE "xml-sha256 " "" recorded "${recorded}")
if(NOT recorded STREQUAL xml_hash)
  message(FATAL_ERROR "bifrost: isa_table.inc was generated from another ISA.xml (table ${recorded}, xml ${xml_hash}); regenerate it with frontend/bifrost/tools/gen_isa_table.py")
endif()
message(STATUS "bifrost: isa_table.inc matches ISA.xml (${xml_hash})")
