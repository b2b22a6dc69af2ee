# What `cmake --install` and `cpack -G DEB` put on a user's machine (the
# binary, its man page, bash/zsh/fish completions, the README), and the tests
# that check it. Included at the end of the top-level CMakeLists.txt.

# The binary says the version the package carries.
target_compile_definitions(runner_cli PRIVATE RUNNER_VERSION="${PROJECT_VERSION}")

# The man page, written from the built binary's own help (cmake/man_page.sh).
find_program(HELP2MAN help2man)
if(HELP2MAN)
  set(man_page ${CMAKE_BINARY_DIR}/runner.1.gz)
  add_custom_command(
    OUTPUT ${man_page}
    COMMAND ${CMAKE_SOURCE_DIR}/cmake/man_page.sh $<TARGET_FILE:runner> ${man_page}
    DEPENDS runner ${CMAKE_SOURCE_DIR}/cmake/man_page.sh
    COMMENT "Writing the man page from runner --help"
    VERBATIM)
  add_custom_target(man_page ALL DEPENDS ${man_page})
  install(FILES ${man_page} DESTINATION share/man/man1)
else()
  message(WARNING "help2man not found: no man page is built or installed (scripts/setup.sh installs it)")
endif()

install(FILES completions/runner.bash DESTINATION share/bash-completion/completions RENAME runner)
install(FILES completions/runner.zsh DESTINATION share/zsh/site-functions RENAME _runner)
install(FILES completions/runner.fish DESTINATION share/fish/vendor_completions.d)

add_test(NAME bash_completion
  COMMAND ${CMAKE_SOURCE_DIR}/tests/install/bash_completion_test.sh $<TARGET_FILE:runner>
          ${CMAKE_SOURCE_DIR}/completions/runner.bash)
set_tests_properties(bash_completion PROPERTIES TIMEOUT 120)
