// ThreadSanitizer and spdlog. libspdlog.so (Debian) is not instrumented, so the thread-safe
// static initialisation of its registry (the first spdlog call of a process, on one thread, and
// the first on another) looks like a data race to TSan: the write is inside the library's
// registry constructor, where TSan cannot see the initialisation guard. Every report of the
// cluster tests under the tsan preset was that one (cluster_fault_test: 4 reports in 2 tests).
//
// Contract: include in exactly one .cpp of a program. Under -fsanitize=thread it tells TSan to
// drop reports whose stacks pass through libspdlog (spdlog's own internals; nothing of ours
// runs there); in any other build it is empty.
#pragma once

#if defined(__SANITIZE_THREAD__)
extern "C" const char* __tsan_default_suppressions() { return "race:libspdlog.so\n"; }
#endif
