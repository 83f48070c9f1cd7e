// Opening a file beneath a directory descriptor, so that no symlink, ".." or
// rename on the way can lead the open outside it: Linux openat2 with
// RESOLVE_BENEATH (a symlink that stays inside is followed, one that leads
// out fails with EXDEV), and where the kernel has no openat2 (ENOSYS, or a
// seccomp filter's EPERM), one component at a time with O_NOFOLLOW (every
// symlink fails, with ELOOP or ENOTDIR). No LibTorch here.
#pragma once
#include <string>

namespace tula::common {

// A descriptor for `relative` (no leading '/') beneath `dir_fd`, opened with
// `flags` (O_CLOEXEC added); -1 with errno set when it cannot be.
int open_beneath(int dir_fd, const std::string& relative, int flags);

// The same, one component at a time with O_NOFOLLOW (what open_beneath falls
// back to; its own entry point for the tests).
int open_beneath_by_components(int dir_fd, const std::string& relative, int flags);

}  // namespace tula::common
