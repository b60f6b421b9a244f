// A deliberately forbidden edge for the dependency test: isa/ may include nothing else.
#pragma once
#include "emulator/wafer.hpp"
