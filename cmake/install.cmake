# What `cmake --install` and `cpack -G DEB` put on a user's machine (the
# binary, its man pages, bash/zsh/fish completions, the README, the license
# and the changelog), and the tests that check it. Included at the end of the top-level
# CMakeLists.txt.

# The version the binary and the package carry, and the commit the binary
# names in `runner --version` (fixed at configure time; a commit runs the
# configuration again).
set(RUNNER_VERSION ${PROJECT_VERSION} CACHE STRING
    "Version of the binary and the .deb (a Debian revision after a hyphen: 0.1.0-1)")
include(${CMAKE_SOURCE_DIR}/cmake/source_commit.cmake)
runner_source_commit(${CMAKE_SOURCE_DIR} RUNNER_COMMIT)
if(RUNNER_COMMIT)
  execute_process(COMMAND git -C ${CMAKE_SOURCE_DIR} rev-parse --git-path logs/HEAD
                  OUTPUT_VARIABLE head_log OUTPUT_STRIP_TRAILING_WHITESPACE)
  get_filename_component(head_log ${head_log} ABSOLUTE BASE_DIR ${CMAKE_SOURCE_DIR})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${head_log})
else()
  message(STATUS "Not a git checkout: runner --version will say its commit is unknown")
endif()
configure_file(${CMAKE_SOURCE_DIR}/src/cli/build_info.cpp.in ${CMAKE_BINARY_DIR}/generated/build_info.cpp
               @ONLY)
target_sources(runner_cli PRIVATE ${CMAKE_BINARY_DIR}/generated/build_info.cpp)

# The man pages, from their scdoc sources in docs/man/ (cmake/man_page.sh);
# runner(1) lists each subcommand's options from the built binary's --help.
find_program(SCDOC scdoc)
if(SCDOC)
  set(man_pages "")
  foreach(page runner.1 runner-hosts.yaml.5 runner-queue.yaml.5)
    set(source ${CMAKE_SOURCE_DIR}/docs/man/${page}.scd)
    set(output ${CMAKE_BINARY_DIR}/man/${page}.gz)
    string(REGEX REPLACE ".*\\.([0-9])$" "\\1" section ${page})
    if(section STREQUAL "1")
      set(binary $<TARGET_FILE:runner>)
      set(binary_target runner)
    else()
      set(binary "")
      set(binary_target "")
    endif()
    add_custom_command(
      OUTPUT ${output}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
      COMMAND ${CMAKE_SOURCE_DIR}/cmake/man_page.sh ${source} ${RUNNER_VERSION} ${output} ${binary}
      DEPENDS ${source} ${binary_target} ${CMAKE_SOURCE_DIR}/cmake/man_page.sh
      COMMENT "Writing the man page ${page}"
      VERBATIM)
    install(FILES ${output} DESTINATION share/man/man${section})
    list(APPEND man_pages ${output})
  endforeach()
  add_custom_target(man_pages ALL DEPENDS ${man_pages})
else()
  message(WARNING "scdoc not found: no man page is built or installed (scripts/setup.sh installs it)")
endif()

install(FILES completions/runner.bash DESTINATION share/bash-completion/completions RENAME runner)
install(FILES completions/runner.zsh DESTINATION share/zsh/site-functions RENAME _runner)
install(FILES completions/runner.fish DESTINATION share/fish/vendor_completions.d)
install(FILES README.md LICENSE DESTINATION share/doc/runner)
# The guides README links to, beside it as in the source tree.
file(GLOB runner_guides CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES ${runner_guides} DESTINATION share/doc/runner/docs)
# Debian's machine-readable copyright file, beside the license.
install(FILES cmake/copyright DESTINATION share/doc/runner)

# The .deb's Maintainer: -DRUNNER_MAINTAINER="Name <mail>", else Debian's
# DEBFULLNAME and DEBEMAIL (as dch takes them), else the author of the
# commit it is built from.
set(RUNNER_MAINTAINER "" CACHE STRING "Maintainer of the .deb, as \"Name <mail>\"")
set(maintainer "${RUNNER_MAINTAINER}")
if(NOT maintainer AND DEFINED ENV{DEBFULLNAME} AND DEFINED ENV{DEBEMAIL})
  set(maintainer "$ENV{DEBFULLNAME} <$ENV{DEBEMAIL}>")
endif()
if(NOT maintainer AND RUNNER_COMMIT)
  execute_process(COMMAND git -C ${CMAKE_SOURCE_DIR} log -1 "--format=%an <%ae>"
                  OUTPUT_VARIABLE maintainer OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()
if(NOT maintainer)
  message(WARNING "No maintainer for the .deb: cpack will refuse to build it; "
                  "configure with -DRUNNER_MAINTAINER=\"Name <mail>\"")
endif()

# The changelog Debian asks every package for: one entry, this version,
# built from this commit. changelog.gz for a native version (0.1.0),
# changelog.Debian.gz for one with a Debian revision (0.1.0-1).
if(RUNNER_COMMIT)
  execute_process(COMMAND git -C ${CMAKE_SOURCE_DIR} log -1 --format=%aD
                  OUTPUT_VARIABLE changelog_date OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(changelog_change "Built from commit ${RUNNER_COMMIT}.")
else()
  string(TIMESTAMP changelog_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
  set(changelog_change "Built from a source tree without git.")
endif()
if(RUNNER_VERSION MATCHES "-")
  set(changelog_name changelog.Debian)
else()
  set(changelog_name changelog)
endif()
file(WRITE ${CMAKE_BINARY_DIR}/${changelog_name}
     "runner (${RUNNER_VERSION}) unstable; urgency=medium\n\n  * ${changelog_change}\n\n"
     " -- ${maintainer}  ${changelog_date}\n")
file(REMOVE ${CMAKE_BINARY_DIR}/changelog.gz ${CMAKE_BINARY_DIR}/changelog.Debian.gz)
execute_process(COMMAND gzip -9n ${CMAKE_BINARY_DIR}/${changelog_name})
install(FILES ${CMAKE_BINARY_DIR}/${changelog_name}.gz DESTINATION share/doc/runner)

# The .deb: its Depends are the packages the binary's shared libraries come
# from, as dpkg-shlibdeps finds them (libssh2-1, libyaml-cpp0.7, libfmt9, ...).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME runner)
set(CPACK_PACKAGE_VERSION ${RUNNER_VERSION})
set(CPACK_PACKAGE_CONTACT "${maintainer}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "drain a queue of shell commands onto a fleet of GPU nodes over SSH")
# The long description below the summary.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "runner runs the jobs of a queue file (benchmark and training campaigns: every
model, task and batch size) on the slots of a hosts file, typically one job
per GPU, over persistent SSH connections, while the queue file may be edited.
It keeps each job's output and a journal of every start and end, stops jobs
that run too long, runs failed jobs again, and runs jobs that span nodes
(torchrun, MPI), services, and campaigns inside a Slurm allocation.
.
It is a drop-in successor of Pegasus: its hosts.yaml and queue.yaml run
unchanged.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# runner reads the ssh configuration through `ssh -G` when ssh is there.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS openssh-client)
include(CPack)

add_test(NAME bash_completion
  COMMAND ${CMAKE_SOURCE_DIR}/tests/install/bash_completion_test.sh $<TARGET_FILE:runner>
          ${CMAKE_SOURCE_DIR}/completions/runner.bash)
add_test(NAME version_names_commit
  COMMAND ${CMAKE_SOURCE_DIR}/tests/install/version_test.sh $<TARGET_FILE:runner> ${RUNNER_VERSION}
          ${CMAKE_SOURCE_DIR})
add_test(NAME install_into_destdir
  COMMAND ${CMAKE_SOURCE_DIR}/tests/install/install_test.sh ${CMAKE_BINARY_DIR})
add_test(NAME deb_package
  COMMAND ${CMAKE_SOURCE_DIR}/tests/install/deb_package_test.sh ${CMAKE_BINARY_DIR})
set_tests_properties(bash_completion version_names_commit install_into_destdir deb_package PROPERTIES TIMEOUT 120
                     LABELS integration)
