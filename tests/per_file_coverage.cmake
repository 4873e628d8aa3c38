# ctest entry (tests/CMakeLists.txt, NPUSIM_CTEST_PER_FILE): fails when the Catch2 program EXE has
# a test case whose file (Catch2's -# tag, the file name without its extension) is not one of
# STEMS, the files that have a ctest entry; such a case would never run.
#   cmake -DEXE=PROGRAM -DSTEMS=a_test;b_test -P per_file_coverage.cmake
cmake_minimum_required(VERSION 3.25)
execute_process(COMMAND ${EXE} "-#" --list-tags OUTPUT_VARIABLE out RESULT_VARIABLE rc)
# Catch2 2.x's --list-tags exits with the number of tags it listed.
if(NOT rc MATCHES "^[0-9]+$" OR rc EQUAL 0)
  message(FATAL_ERROR "${EXE} -# --list-tags failed (${rc}):\n${out}")
endif()
string(REGEX MATCHALL "\\[#[^]]+\\]" tags "${out}")
if(NOT tags)
  message(FATAL_ERROR "${EXE} -# --list-tags listed no file tags:\n${out}")
endif()
set(missing)
foreach(tag IN LISTS tags)
  string(REGEX REPLACE "^\\[#(.*)\\]$" "\\1" stem "${tag}")
  if(NOT stem IN_LIST STEMS)
    list(APPEND missing ${stem})
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "${EXE}: test cases in ${missing} belong to no ctest entry (files with one: ${STEMS})")
endif()
list(LENGTH tags n)
message(STATUS "${EXE}: the cases of all ${n} files run")
