// Errno names for logs and tests.
#include "ifcore/result.h"

#include <cerrno>

namespace ifcore {

const char* errno_name(int code) {
  struct Name {
    int code;
    const char* name;
  };
  // clang-format off
  static constexpr Name kNames[] = {
      {EPERM, "EPERM"},
      {ENOENT, "ENOENT"},
      {ESRCH, "ESRCH"},
      {EINTR, "EINTR"},
      {EIO, "EIO"},
      {ENXIO, "ENXIO"},
      {E2BIG, "E2BIG"},
      {EBADF, "EBADF"},
      {EAGAIN, "EAGAIN"},
      {ENOMEM, "ENOMEM"},
      {EACCES, "EACCES"},
      {EFAULT, "EFAULT"},
      {EBUSY, "EBUSY"},
      {EEXIST, "EEXIST"},
      {EXDEV, "EXDEV"},
      {ENODEV, "ENODEV"},
      {ENOTDIR, "ENOTDIR"},
      {EINVAL, "EINVAL"},
      {ENFILE, "ENFILE"},
      {EMFILE, "EMFILE"},
      {ENOSPC, "ENOSPC"},
      {ERANGE, "ERANGE"},
      {ENOSYS, "ENOSYS"},
      {ELOOP, "ELOOP"},
      {ENAMETOOLONG, "ENAMETOOLONG"},
      {EOPNOTSUPP, "EOPNOTSUPP"},
      {ENOBUFS, "ENOBUFS"},
      {EADDRINUSE, "EADDRINUSE"},
      {EADDRNOTAVAIL, "EADDRNOTAVAIL"},
      {ENETDOWN, "ENETDOWN"},
      {ENETUNREACH, "ENETUNREACH"},
      {EHOSTUNREACH, "EHOSTUNREACH"},
      {EPROTONOSUPPORT, "EPROTONOSUPPORT"},
      {EAFNOSUPPORT, "EAFNOSUPPORT"},
      {EMSGSIZE, "EMSGSIZE"},
      {EPROTO, "EPROTO"},
      {ETIMEDOUT, "ETIMEDOUT"},
      {ECONNREFUSED, "ECONNREFUSED"},
      {ENOTCONN, "ENOTCONN"},
      {ENOMSG, "ENOMSG"},
  };
  // clang-format on
  for (const Name& n : kNames)
    if (n.code == code) return n.name;
  return "E?";
}

}  // namespace ifcore
