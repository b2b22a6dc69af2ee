# What `cmake --install` and `cpack` put on a user's machine, and the tests
# that check it. Included at the end of the top-level CMakeLists.txt.

# The binary says the version the package carries.
target_compile_definitions(runner_cli PRIVATE RUNNER_VERSION="${PROJECT_VERSION}")
