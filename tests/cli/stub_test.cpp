#include <gtest/gtest.h>
TEST(Stub, Ok) {}
