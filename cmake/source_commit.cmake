# The git commit a source tree is at, as `git describe --always --dirty`
# names it ("497f146", "497f146-dirty"); empty for a tree that is not a git
# checkout of its own (an unpacked release, even inside another checkout) or
# where there is no git program.
# Included: runner_source_commit(DIR VARIABLE). As a script
# (cmake -DSOURCE_DIR=DIR -P source_commit.cmake): prints it, or "none".
function(runner_source_commit dir variable)
  set(commit "")
  find_program(GIT_PROGRAM git)
  if(GIT_PROGRAM)
    execute_process(COMMAND ${GIT_PROGRAM} -C ${dir} rev-parse --show-toplevel
                    OUTPUT_VARIABLE top OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                    RESULT_VARIABLE failed)
    file(REAL_PATH "${dir}" dir_path)
    if(NOT failed AND top)
      file(REAL_PATH "${top}" top_path)
    endif()
    if(NOT failed AND top AND top_path STREQUAL dir_path)
      execute_process(COMMAND ${GIT_PROGRAM} -C ${dir} describe --always --dirty
                      OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    endif()
  endif()
  set(${variable} "${commit}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND SOURCE_DIR)
  runner_source_commit(${SOURCE_DIR} commit)
  if(commit)
    message("${commit}")
  else()
    message("none")
  endif()
endif()
