// The object the test executables take their precompiled header from (tests/CMakeLists.txt).
