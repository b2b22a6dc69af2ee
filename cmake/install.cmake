# What `cmake --install` and `cpack -G DEB` put on a user's machine (the
# binary, its man page, bash/zsh/fish completions, the README), and the tests
# that check it. Included at the end of the top-level CMakeLists.txt.

# The binary says the version the package carries.
target_compile_definitions(runner_cli PRIVATE RUNNER_VERSION="${PROJECT_VERSION}")

install(FILES completions/runner.bash DESTINATION share/bash-completion/completions RENAME runner)
install(FILES completions/runner.zsh DESTINATION share/zsh/site-functions RENAME _runner)
install(FILES completions/runner.fish DESTINATION share/fish/vendor_completions.d)

add_test(NAME bash_completion
  COMMAND ${CMAKE_SOURCE_DIR}/tests/install/bash_completion_test.sh $<TARGET_FILE:runner>
          ${CMAKE_SOURCE_DIR}/completions/runner.bash)
set_tests_properties(bash_completion PROPERTIES TIMEOUT 120)
