#!/usr/bin/env python3
"""`aiprof mcp`'s query limits over stdio (trial_limits, session 46).

SQLite compiles a statement outside the engine's time limit and the
client's cancellation (the progress handler runs only while a statement
executes), and one CASE of N branches compiles in time growing as N^2: a
`query` call of 150,000 WHENs (3.4 MB, well under the 16 MiB a message may
be) held the server's one worker for minutes past the 30 s limit, a
cancellation did nothing, and every later call waited behind it (at 16 MiB,
about half an hour). The SQL of a `query` call is now at most 64 KiB: past
it, a tool error naming the limit, at once, and the server goes on.

  mcp_limits_test.py --aiprof build/aiprof --data test/data
"""
import argparse
import json
import os
import subprocess
import sys

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--data", required=True)
    args = ap.parse_args()
    trace = os.path.abspath(os.path.join(args.data, "convnet_bs8_channels_last.kineto.json"))
    p = subprocess.Popen([args.aiprof, "mcp", "--allow", os.path.dirname(trace)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    next_id = [0]

    def call(method, params):
        next_id[0] += 1
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": next_id[0], "method": method, "params": params}) +
                       "\n").encode())
        p.stdin.flush()
        line = p.stdout.readline()
        return json.loads(line) if line else {}

    try:
        call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "mcp_limits_test", "version": "1"}})
        loaded = call("tools/call", {"name": "load_trace", "arguments": {"path": trace}})
        tid = loaded.get("result", {}).get("structuredContent", {}).get("trace")
        tools = call("tools/list", {}).get("result", {}).get("tools", [])
        query_tool = [t for t in tools if t.get("name") == "query"]
        check(query_tool and "the SQL at most 64 KiB" in query_tool[0].get("description", ""),
              "the query tool's description says the SQL limit: %s" % (query_tool[0].get("description") if query_tool
                                                                        else tools))
        check(tid is not None, "the trace loads: %s" % json.dumps(loaded)[:200])
        # 3,388 WHENs (65,583 bytes): over the limit, compiled in well under a second
        # by the old code, which answered it.
        sql = "SELECT CASE id"
        i = 0
        while len(sql) <= 64 << 10:
            sql += " WHEN %d THEN %d" % (i, i)
            i += 1
        sql += " END AS c FROM slices LIMIT 1"
        r = call("tools/call", {"name": "query", "arguments": {"trace": tid, "sql": sql}})
        result = r.get("result", {})
        text = result.get("content", [{}])[0].get("text", "")
        check(result.get("isError") is True and ("the SQL is %d bytes, over the 64 KiB" % len(sql)) in text,
              "a query of %d bytes of SQL is a tool error naming the limit: %s" % (len(sql), json.dumps(r)[:300]))
        r = call("tools/call", {"name": "query", "arguments": {"trace": tid, "sql": "SELECT 6 * 7 AS answer"}})
        check(r.get("result", {}).get("structuredContent", {}).get("rows") == [[42]],
              "the next call is answered: %s" % json.dumps(r)[:200])
        r = call("tools/call", {"name": "query", "arguments": {"trace": tid,
                                                               "sql": "SELECT 1 AS one -- " + "x" * 60000}})
        check(r.get("result", {}).get("structuredContent", {}).get("rows") == [[1]],
              "SQL under 64 KiB runs: %s" % json.dumps(r)[:200])
        # A message is one line of at most 16 MiB. One of 3 MiB (white space
        # inside the JSON) is read whole across the reader's 64 KiB blocks;
        # one past 16 MiB is a parse error, and the server goes on.
        next_id[0] += 1
        big = '{"jsonrpc": "2.0", "id": %d,%s"method": "ping"}\n' % (next_id[0], " " * (3 << 20))
        p.stdin.write(big.encode())
        p.stdin.flush()
        r = json.loads(p.stdout.readline() or "{}")
        check(r.get("id") == next_id[0] and r.get("result") == {}, "a 3 MiB message is answered: %s" % json.dumps(r)[:200])
        p.stdin.write(b'{"jsonrpc": "2.0", "id": 999, "method": "ping"' + b" " * (16 << 20) + b"}\n")
        p.stdin.flush()
        r = json.loads(p.stdout.readline() or "{}")
        check(r.get("error", {}).get("code") == -32700, "a message past 16 MiB is a parse error: %s" % json.dumps(r)[:200])
        r = call("ping", {})
        check(r.get("id") == next_id[0] and r.get("result") == {}, "the next message is answered: %s" % json.dumps(r)[:200])
    finally:
        p.stdin.close()
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    check(p.returncode == 0, "the server ends at end of input: %s" % p.returncode)
    if FAILURES:
        print("%d failed" % len(FAILURES))
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
