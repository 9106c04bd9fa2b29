#!/usr/bin/env python3
"""tests/e2e/batch_progress.py — `ifc -batch` shows its progress on standard error when that
is a terminal (a pseudo-terminal here), erases it before an error is printed and at the
end, and prints nothing of it when standard error is a pipe; what it writes to standard
output is the same either way.

    batch_progress.py IFC   (run under with_daemon.sh: IFCORED_SOCKET names the daemon)
"""
import os
import pty
import subprocess
import sys
import tempfile

ERASE = "\r\x1b[K"


def run(ifc, sock, batch, on_tty):
    """Runs the batch; returns (status, stdout, stderr as text)."""
    args = [ifc, "--socket", sock, "-force", "-batch", batch]
    if not on_tty:
        p = subprocess.run(args, capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout, p.stderr
    master, slave = pty.openpty()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    got = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the program closed its end
            break
        if not chunk:
            break
        got += chunk
    out, _ = p.communicate(timeout=60)
    os.close(master)
    return p.returncode, out, got.decode()


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def main():
    ifc = sys.argv[1]
    sock = os.environ["IFCORED_SOCKET"]
    with tempfile.TemporaryDirectory() as tmp:
        lines = [f"link add p{i} type dummy" for i in range(3000)]
        lines.append("link add p7 type dummy")  # EEXIST: reported, the batch goes on (-force)
        lines.append("link show dev p1")
        lines += [f"link del p{i}" for i in range(3000)]
        batch = os.path.join(tmp, "lines.batch")
        with open(batch, "w") as f:
            f.write("\n".join(lines) + "\n")

        status, out_tty, err_tty = run(ifc, sock, batch, on_tty=True)
        check(status == 1, f"status {status} (one line failed)")
        check(f"\r{batch}: 1 lines, 0%\x1b[K" in err_tty, "the first drawing: " + repr(err_tty[:200]))
        last_drawing = err_tty.rindex(f"\r{batch}: ")
        check(ERASE in err_tty[last_drawing + 1:], "the last drawing is erased: " + repr(err_tty[-80:]))
        failed = f"Command failed {batch}:3001"
        check(failed in err_tty, "the failed line is reported")
        # Whatever is printed starts on a clean line: the progress line was erased first.
        report = err_tty.index("RTNETLINK answers: File exists")
        check(err_tty[:report].endswith(ERASE), "erased before the report: " + repr(err_tty[report - 40:report + 10]))
        plain = err_tty.replace(ERASE, "")
        plain = "".join(part.split("\x1b[K")[-1] for part in plain.split("\r"))
        check("RTNETLINK answers: File exists" in plain and failed in plain, "the report reads whole")

        status, out_pipe, err_pipe = run(ifc, sock, batch, on_tty=False)
        check(status == 1, f"status {status} on a pipe")
        check(err_pipe == f"RTNETLINK answers: File exists\n{failed}\n",
              "no progress on a pipe: " + repr(err_pipe))
        # The same device line, but for its ifindex (and its random MAC, on the next line).
        def device_line(out):
            return out.split("\n")[0].split(":", 1)[-1]
        check(device_line(out_tty) == device_line(out_pipe) and ": p1: <" in out_pipe,
              "the same standard output: " + repr(out_tty) + " " + repr(out_pipe))
    print("ok")


if __name__ == "__main__":
    main()
