// Errno names for logs and tests.
#include "ifcore/result.h"

#include <cerrno>

namespace ifcore {

const char* errno_name(int code) {
  switch (code) {
#define IFCORE_E(x) \
  case x:           \
    return #x;
    IFCORE_E(EPERM)
    IFCORE_E(ENOENT) IFCORE_E(ESRCH) IFCORE_E(EINTR) IFCORE_E(EIO) IFCORE_E(ENXIO) IFCORE_E(E2BIG)
        IFCORE_E(EBADF) IFCORE_E(EAGAIN) IFCORE_E(ENOMEM) IFCORE_E(EACCES) IFCORE_E(EFAULT)
            IFCORE_E(EBUSY) IFCORE_E(EEXIST) IFCORE_E(EXDEV) IFCORE_E(ENODEV) IFCORE_E(ENOTDIR)
                IFCORE_E(EINVAL) IFCORE_E(ENFILE) IFCORE_E(EMFILE) IFCORE_E(ENOSPC) IFCORE_E(ERANGE)
                    IFCORE_E(ENOSYS) IFCORE_E(ELOOP) IFCORE_E(ENAMETOOLONG) IFCORE_E(EOPNOTSUPP)
                        IFCORE_E(ENOBUFS) IFCORE_E(EADDRINUSE) IFCORE_E(EADDRNOTAVAIL)
                            IFCORE_E(ENETDOWN) IFCORE_E(ENETUNREACH) IFCORE_E(EHOSTUNREACH)
                                IFCORE_E(EPROTONOSUPPORT) IFCORE_E(EAFNOSUPPORT) IFCORE_E(EMSGSIZE)
                                    IFCORE_E(ETIMEDOUT) IFCORE_E(ECONNREFUSED) IFCORE_E(ENOTCONN)
                                        IFCORE_E(ENOMSG)
#undef IFCORE_E
                                            default : return "E?";
  }
}

}  // namespace ifcore
