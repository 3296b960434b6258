"""One TCP stream of 64 MiB with blocking sockets (bench/wire/run): what an emulated link
carries without MPI. `recv ADDR PORT` listens and prints the rate once all arrived;
`send ADDR PORT` connects and sends."""
import socket
import sys
import time

TOTAL = 64 << 20
mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "recv":
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((addr, port))
    server.listen(1)
    conn, _ = server.accept()
    buf = bytearray(1 << 20)
    got, start = 0, None
    while got < TOTAL:
        n = conn.recv_into(buf)
        if n == 0:
            break
        if start is None:
            start = time.monotonic()
        got += n
    took = time.monotonic() - start
    print(f"{got} {took:.4f} {got / took / 1e6:.1f}")
else:
    conn = socket.create_connection((addr, port))
    chunk = bytes(1 << 20)
    for _ in range(TOTAL // len(chunk)):
        conn.sendall(chunk)
    conn.close()
