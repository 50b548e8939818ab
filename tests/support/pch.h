#pragma once
// The precompiled header of the test executables (tests/CMakeLists.txt,
// COPSE_PCH). A test file at -O0 spends most of its compile time parsing and
// instantiating third-party headers; precompiled once, they cost each test
// batch a fraction of that. Only third-party and standard headers belong
// here: a copse header in it would rebuild every test when it changes.
// Test files still include what they use (the build without a precompiled
// header, -DCOPSE_PCH=OFF, must compile).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>
