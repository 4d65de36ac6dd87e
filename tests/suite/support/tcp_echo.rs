//! A TCP echo server and a client that pings it through whatever address it is given
//! (a fault proxy, or the server itself), logging `ok` / `failed: …` on stderr — real
//! traffic for the proxy tests.
#![allow(dead_code)]

/// `python3 -c ECHO PORT`: echoes every connection on 127.0.0.1:PORT.
pub const ECHO: &str = r#"
import socket, sys, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(128)
def serve(c):
    while True:
        d = c.recv(65536)
        if not d:
            break
        c.sendall(d)
    c.close()
while True:
    threading.Thread(target=serve, args=(s.accept()[0],), daemon=True).start()
"#;

/// `python3 -c CLIENT PORT SECONDS`: connects, sends `ping`, expects it back, every 50 ms.
pub const CLIENT: &str = r#"
import socket, sys, time
end = time.time() + float(sys.argv[2])
while time.time() < end:
    try:
        c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.5)
        c.sendall(b"ping\n")
        if c.recv(16) != b"ping\n":
            raise OSError("short echo")
        c.close()
        print("ok", file=sys.stderr, flush=True)
    except OSError as e:
        print("failed:", e, file=sys.stderr, flush=True)
    time.sleep(0.05)
"#;
