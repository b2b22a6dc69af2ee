# Fails when a file of one area includes a header of an area it may not use.
# Run by the build (see runner_area in CMakeLists.txt) with
#   -DSOURCE_DIR=<tree> -DRULES="area=allowed,allowed|area=..." -DSTAMP=<file>
# Every area may include `core`, the vocabulary that includes nothing of ours.
cmake_minimum_required(VERSION 3.18)
set(violations "")
string(REPLACE "|" ";" RULES "${RULES}")
foreach(rule IN LISTS RULES)
  string(REPLACE "=" ";" parts "${rule}")
  list(GET parts 0 area)
  list(LENGTH parts n)
  set(allowed core ${area})
  if(n GREATER 1)
    list(GET parts 1 uses)
    string(REPLACE "," ";" uses "${uses}")
    list(APPEND allowed ${uses})
  endif()
  file(GLOB_RECURSE files ${SOURCE_DIR}/src/${area}/*.cpp ${SOURCE_DIR}/src/${area}/*.h
       ${SOURCE_DIR}/include/runner/${area}/*.h)
  foreach(file IN LISTS files)
    file(STRINGS ${file} includes REGEX "^#include \"runner/[a-z_]+/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^#include \"runner/([a-z_]+)/.*" "\\1" used "${line}")
      if(NOT used IN_LIST allowed)
        file(RELATIVE_PATH where ${SOURCE_DIR} ${file})
        string(APPEND violations "\n  ${where}: ${line} (${area} may use: ${allowed})")
      endif()
    endforeach()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "An area includes a header of an area below which it does not sit:"
                      "${violations}\nMove the shared type to include/runner/core, or "
                      "declare the dependency in CMakeLists.txt's runner_area().")
endif()
file(WRITE ${STAMP} "layering ok\n")
