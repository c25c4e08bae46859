#!/usr/bin/env python3
"""aiprof mcp over stdio, driven as an MCP client does (JSON-RPC 2.0, one
message per line): initialize, tools/list, load_trace, summary (its figures
equal `aiprof summary --format json`), query, analyze, whatif (equal to
`aiprof whatif`), resources/list, and the errors: a path outside --allow,
unknown tools and methods, bad arguments, a broken message, a failing
query; a query cancelled by notifications/cancelled while requests wait
behind it (ping answered meanwhile, the 33rd waiting request refused as
busy, no reply to the cancelled one). The server must answer each and keep
serving."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

FAILURES = []
CHECKS = [0]


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


class Client:
    def __init__(self, aiprof, allow):
        self.p = subprocess.Popen([aiprof, "mcp", *sum((["--allow", d] for d in allow), [])],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.next_id = 0

    def send_raw(self, line):
        self.p.stdin.write(line.encode() + b"\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def call(self, method, params=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        reply = self.send_raw(json.dumps(msg))
        check(reply.get("id") == self.next_id and reply.get("jsonrpc") == "2.0", "reply echoes id: %r" % reply)
        return reply

    def notify(self, method):
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "method": method}) + "\n").encode())
        self.p.stdin.flush()

    def tool(self, name, **args):
        return self.call("tools/call", {"name": name, "arguments": args})

    def close(self):
        self.p.stdin.close()
        rc = self.p.wait(timeout=60)
        return rc


def hostile_names(aiprof, sample):
    """A path with ESC and a right-to-left override, and a cancellation whose
    id and reason carry them (D9 of the serve trial): the tool's text, the
    error messages and the stderr log show them as \\xNN / \\uXXXX; the
    structured content keeps the path as it is (data)."""
    with tempfile.TemporaryDirectory() as d:
        evil = os.path.join(d, "e\x1b[2Jx\u202erl.json")
        with open(sample, "rb") as src, open(evil, "wb") as dst:
            dst.write(src.read())
        c = Client(aiprof, [d])
        c.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "test", "version": "0"}})
        r = c.tool("load_trace", path=evil)
        text = r.get("result", {}).get("content", [{}])[0].get("text", "")
        check("\x1b" not in text and "\u202e" not in text and "e\\x1b[2Jx\\u202erl.json" in text,
              "load_trace's text shows the path's controls: %r" % text)
        check(r.get("result", {}).get("structuredContent", {}).get("path") == os.path.realpath(evil),
              "the structured path is the path as it is")
        blocks = r.get("result", {}).get("content", [])
        json_text = blocks[1].get("text", "") if len(blocks) > 1 else ""
        check("\x1b" not in json_text and "\u202e" not in json_text
              and json.loads(json_text or "null") == r.get("result", {}).get("structuredContent"),
              "the JSON text shows the controls as JSON escapes and parses to the document: %r" % json_text)
        r = c.tool("load_trace", path=evil + "\u202e.missing")
        message = r.get("error", {}).get("message", "")
        check("\u202e" not in message and "\\u202e.missing" in message, "an error message shows them: %r" % message)
        c.p.stdin.write((json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                     "params": {"requestId": "x\u001b[2J\u202e", "reason": "<script>\u001b[2J"}})
                         + "\n").encode())
        c.p.stdin.flush()
        check(c.call("ping").get("result") == {}, "serving after the cancellation")
        rc = c.close()
        err = c.p.stderr.read().decode("utf-8", "replace")
        check(rc == 0 and "\x1b" not in err and "\u202e" not in err and "(<script>\\x1b[2J)" in err
              and "x\\u001b[2J\\u202e" in err, "stderr shows the client's id and reason: %r" % err)


def relative_missing_path(aiprof):
    """A relative path inside the allowed folder (the server's working
    folder) that does not exist is "No such file or directory", as
    "./name" is: it was "outside the directories this server was allowed",
    which tells an assistant the folder is not allowed (trial_serve2 S5)."""
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.Popen([aiprof, "mcp", "--allow", "."], cwd=d, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        lines = [json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "test", "version": "0"}}})]
        for i, path in enumerate(["missing.json", "./missing.json", "sub/missing.json", "../outside.json"]):
            lines.append(json.dumps({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
                                     "params": {"name": "load_trace", "arguments": {"path": path}}}))
        out, _ = p.communicate(("\n".join(lines) + "\n").encode(), timeout=60)
        replies = {r["id"]: r.get("error", {}).get("message", "") for r in map(json.loads, out.decode().splitlines())}
        for i, path in enumerate(["missing.json", "./missing.json", "sub/missing.json"]):
            check(replies.get(10 + i) == "invalid params: %s: No such file or directory" % path,
                  "a missing relative path inside --allow: %r" % replies.get(10 + i))
        check("outside the directories this server was allowed" in replies.get(13, ""),
              "../ is still outside: %r" % replies.get(13))


def reload_and_unload(aiprof, sample):
    """Loading one path again, unchanged, gives its id (D10 of the serve
    trial: 8 loads of one path filled the session for good); a changed file
    is a new trace; unload_trace forgets one, so a full session takes
    another."""
    with tempfile.TemporaryDirectory() as d:
        copies = []
        for k in range(9):
            copies.append(os.path.join(d, "c%d.json" % k))
            with open(sample, "rb") as src, open(copies[-1], "wb") as dst:
                dst.write(src.read())
        c = Client(aiprof, [d])
        c.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "test", "version": "0"}})
        ids = [c.tool("load_trace", path=copies[0]).get("result", {}).get("structuredContent", {}).get("trace")
               for _ in range(10)]
        check(ids == ["t1"] * 10, "the same path, unchanged, keeps its id: %s" % ids)
        r = c.tool("load_trace", path=os.path.join(d, ".", "c0.json"))
        check(r["result"]["structuredContent"].get("reused") is True, "the same file by another spelling: %r" % r)
        st = os.stat(copies[0])
        os.utime(copies[0], ns=(st.st_atime_ns, st.st_mtime_ns + 1000000000))
        r = c.tool("load_trace", path=copies[0])
        check(r["result"]["structuredContent"]["trace"] == "t2" and r["result"]["structuredContent"]["reused"] is False,
              "a changed file is loaded again: %r" % r["result"]["structuredContent"])
        for k in range(1, 7):
            c.tool("load_trace", path=copies[k])
        r = c.tool("load_trace", path=copies[8])
        check(r["result"]["isError"] is True and "unload_trace" in r["result"]["content"][0]["text"],
              "a ninth trace: the limit names unload_trace: %r" % r["result"]["content"])
        r = c.tool("unload_trace", trace="t1")
        check(r.get("result", {}).get("structuredContent") == {"trace": "t1", "path": os.path.realpath(copies[0])},
              "unload_trace: %r" % r)
        check(c.tool("summary", trace="t1").get("error", {}).get("code") == -32602, "an unloaded id no longer answers")
        check(c.tool("unload_trace", trace="t1").get("error", {}).get("code") == -32602, "unloading twice: -32602")
        check(c.tool("unload_trace").get("error", {}).get("code") == -32602, "unload_trace needs 'trace'")
        r = c.tool("load_trace", path=copies[8])
        check(r["result"]["isError"] is False and r["result"]["structuredContent"]["trace"] == "t9",
              "after unloading one, another loads: %r" % r["result"])
        listed = [x["trace"] for x in c.tool("list_traces")["result"]["structuredContent"]["traces"]]
        check(sorted(listed) == sorted(["t%d" % k for k in range(2, 10)]), "list_traces after unload: %s" % listed)
        check(c.close() == 0, "exits 0")

    # A folder (ranks merged): a rank file rewritten in place changes neither
    # the folder's entries nor its own mtime, so the folder's stat alone
    # called the stale trace unchanged.
    with tempfile.TemporaryDirectory() as d:
        run = os.path.join(d, "run")
        os.mkdir(run)
        ranks = [os.path.join(run, "rank%d.pt.trace.json" % k) for k in range(2)]
        for path in ranks:
            with open(sample, "rb") as src, open(path, "wb") as dst:
                dst.write(src.read())
        c = Client(aiprof, [d])
        c.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "test", "version": "0"}})
        first = c.tool("load_trace", path=run)["result"]
        check(first["isError"] is False and first["structuredContent"]["trace"] == "t1", "a folder loads: %r" % first)
        again = c.tool("load_trace", path=run)["result"]["structuredContent"]
        check(again.get("reused") is True and again["trace"] == "t1", "the same folder, unchanged: %r" % again)
        folder_mtime = os.stat(run).st_mtime_ns
        st = os.stat(ranks[1])
        with open(ranks[1], "r+b") as f:  # the same bytes, rewritten in place
            data = f.read()
            f.seek(0)
            f.write(data)
        os.utime(ranks[1], ns=(st.st_atime_ns, st.st_mtime_ns + 1000000000))
        os.utime(run, ns=(folder_mtime, folder_mtime))
        changed = c.tool("load_trace", path=run)["result"]["structuredContent"]
        check(changed.get("reused") is False and changed["trace"] == "t2",
              "a folder whose file changed is loaded again: %r" % changed)
        check(c.close() == 0, "exits 0")


def jsonrpc_ids(aiprof, sample):
    """Ids past 64 bits or a double's range are valid JSON: -32600 (id null,
    it cannot be read), not a parse error; a malformed number still is one;
    a fractional id is refused and echoed; a member given twice counts
    last, as JSON.parse and Python's json read it (D12 of the serve trial:
    the first "id" was answered)."""
    c = Client(aiprof, [os.path.dirname(sample)])
    c.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "test", "version": "0"}})
    for big in ("12345678901234567890123", "-9223372036854775809", "1e400"):
        r = c.send_raw('{"jsonrpc":"2.0","id":%s,"method":"ping"}' % big)
        check(r.get("id") is None and r.get("error", {}).get("code") == -32600
              and "64 bits" in r["error"]["message"], "id %s: -32600: %r" % (big, r))
    r = c.send_raw('{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}')
    check(r == {"jsonrpc": "2.0", "id": 18446744073709551615, "result": {}}, "a 64-bit unsigned id: %r" % r)
    for bad in ('{"jsonrpc":"2.0","id":01,"method":"ping"}', '{"jsonrpc":"2.0","id":1.,"method":"ping"}',
                '{"jsonrpc":"2.0","id":-,"method":"ping"}'):
        r = c.send_raw(bad)
        check(r.get("error", {}).get("code") == -32700, "a malformed number is a parse error: %s -> %r" % (bad, r))
    r = c.send_raw('{"jsonrpc":"2.0","id":1.5,"method":"ping"}')
    check(r.get("id") == 1.5 and r.get("error", {}).get("code") == -32600, "a fractional id, echoed: %r" % r)
    r = c.send_raw('{"jsonrpc":"2.0","id":10,"method":"ping","id":11}')
    check(r == {"jsonrpc": "2.0", "id": 11, "result": {}}, "a duplicate id: the last counts: %r" % r)
    r = c.send_raw('{"jsonrpc":"2.0","id":12,"method":"no/such","method":"tools/list","id":13}')
    check(r.get("id") == 13 and "tools" in r.get("result", {}), "duplicate members through the worker: %r" % r)
    check(c.call("ping").get("result") == {}, "still serving")
    check(c.close() == 0, "exits 0")


def text_content_carries_the_data(aiprof, sample):
    """D1 of the query/MCP trial: a tool's document is also its content, as
    JSON text (MCP 2025-06-18, "Structured content": SHOULD), and under
    2024-11-05, which has no structuredContent, only there; D6: the input
    schemas say what the server refuses (additionalProperties false, the
    names of analyze's 'only')."""
    for version in ("2025-06-18", "2024-11-05"):
        c = Client(aiprof, [os.path.dirname(sample)])
        r = c.call("initialize", {"protocolVersion": version, "capabilities": {},
                                  "clientInfo": {"name": "test", "version": "0"}})
        check(r["result"]["protocolVersion"] == version, "initialize %s: %r" % (version, r))
        tools = {t["name"]: t for t in c.call("tools/list")["result"]["tools"]}
        check(all(t["inputSchema"].get("additionalProperties") is False for t in tools.values()),
              "%s: every inputSchema refuses other arguments" % version)
        check(("outputSchema" in tools["whatif"]) == (version == "2025-06-18"),
              "%s: whatif's outputSchema only where structuredContent is sent" % version)
        only = tools["analyze"]["inputSchema"]["properties"]["only"]["items"].get("enum", [])
        check("breakdown" in only and "launches" in only, "analyze's only lists the analyses: %r" % only)
        tid = c.tool("load_trace", path=sample)["result"]["content"][1]["text"]
        tid = json.loads(tid)["trace"]
        r = c.tool("analyze", trace=tid, only=["no_such"])
        names = r.get("error", {}).get("message", "")
        check(r.get("error", {}).get("code") == -32602 and all(n in names for n in only),
              "the enum names what the server accepts: %r" % names)
        r = c.tool("summary", trace=tid, extra=1)
        check(r.get("error", {}).get("code") == -32602, "an argument the schema does not name is refused")
        cli = json.loads(subprocess.run([aiprof, "summary", sample, "--format", "json", "--top", "0"],
                                        capture_output=True, check=True).stdout)
        for tool, args in (("query", {"sql": "SELECT name, count(*) AS n FROM slices GROUP BY name ORDER BY n DESC, "
                                             "name LIMIT 3"}),
                           ("summary", {}), ("diagnose", {})):
            res = c.tool(tool, trace=tid, **args)["result"]
            content = res["content"]
            doc = json.loads(content[1]["text"]) if len(content) == 2 and content[1]["type"] == "text" else None
            check(doc is not None, "%s %s: the document is a second text block: %r" % (version, tool, content))
            if version == "2025-06-18":
                check(doc == res.get("structuredContent"), "%s: the JSON text equals structuredContent" % tool)
            else:
                check("structuredContent" not in res, "2024-11-05: no structuredContent (%s)" % tool)
            if tool == "summary":
                check(doc and doc["totals"] == cli["totals"] and doc["ops"] == cli["ops"],
                      "%s: the summary in the text equals aiprof summary" % version)
            if tool == "query":
                names = {}
                for o in cli["ops"]:
                    names[o["name"]] = names.get(o["name"], 0) + o["count"]
                want = sorted(names.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
                check(doc and doc["rows"] == [list(kv) for kv in want],
                      "%s: the query's rows in the text, as counted from aiprof summary: %r / %r"
                      % (version, doc and doc["rows"], want))
        check(c.close() == 0, "exits 0")


def large_answers(aiprof, data):
    """No answer passes 8 MiB (trial_serve2 S1): the official TypeScript
    SDK's stdio client refuses a message over 10 MiB and closes the session.
    A query's rows are cut to fit (truncated, the text says from how many);
    a summary of a trace with 40,000 distinct long op names (about 40 MiB as
    one message) is a tool error naming its size, and a resource read of it a
    JSON-RPC error; the server answers on."""
    limit = 8 << 20
    resnet = os.path.join(os.path.abspath(data), "resnet50_num_workers_4.pt.trace.json.gz")
    with tempfile.TemporaryDirectory() as d:
        many = os.path.join(d, "many_names.json")
        with open(many, "w") as f:
            f.write('{"traceEvents":[' + ",".join(
                '{"ph":"X","name":"op_%06d_%s","cat":"cpu_op","pid":1,"tid":1,"ts":%d,"dur":1}' % (i, "n" * 200, 2 * i)
                for i in range(40000)) + "]}")
        c = Client(aiprof, [os.path.abspath(data), d])
        c.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "test", "version": "0"}})
        check(c.tool("load_trace", path=resnet)["result"]["isError"] is False, "large: resnet50 loads")

        def raw_tool(name, **args):
            c.next_id += 1
            c.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": c.next_id, "method": "tools/call",
                                         "params": {"name": name, "arguments": args}}) + "\n").encode())
            c.p.stdin.flush()
            line = c.p.stdout.readline()
            return len(line), json.loads(line)

        size, r = raw_tool("query", trace="t1", sql="SELECT * FROM slices ORDER BY id", max_rows=100000)
        sc = r["result"]["structuredContent"]
        text = r["result"]["content"][0]["text"]
        check(size <= limit, "large: the query's answer is at most 8 MiB: %d bytes" % size)
        check(r["result"]["isError"] is False and sc["truncated"] is True and 0 < sc["row_count"] < 41906
              and sc["row_count"] == len(sc["rows"]) and [row[0] for row in sc["rows"]] == list(range(sc["row_count"])),
              "large: rows cut in order, truncated: %s rows" % sc["row_count"])
        check(("%d rows (cut from 41906 to keep this answer under 8.0 MiB" % sc["row_count"]) in text,
              "large: the text says the rows were cut and why: %r" % text)
        size, r = raw_tool("query", trace="t1", sql="SELECT id FROM slices", max_rows=100000)
        check(r["result"]["structuredContent"]["row_count"] == 41906 and
              r["result"]["structuredContent"]["truncated"] is False, "large: a small answer is whole")

        size, r = raw_tool("query", trace="t1", sql="SELECT hex(zeroblob(5000000))")
        check(r["result"]["isError"] is True and "first row alone passes the 8.0 MiB" in r["result"]["content"][0]["text"],
              "large: a row that cannot fit is a tool error: %r" % str(r)[:300])

        check(c.tool("load_trace", path=many)["result"]["isError"] is False, "large: the many-names trace loads")
        size, r = raw_tool("summary", trace="t2")
        text = r["result"]["content"][0]["text"]
        check(size <= limit and r["result"]["isError"] is True and "over the 8.0 MiB one answer may hold" in text
              and "structuredContent" not in r["result"], "large: a summary too big is a tool error: %d bytes, %r"
              % (size, text[:300]))
        check("summary: 'top'" in text, "large: the error says how to ask for less: %r" % text[:400])
        size, r = raw_tool("summary", trace="t2", top=20)
        sc = r["result"].get("structuredContent", {})
        cli = json.loads(subprocess.run([aiprof, "summary", many, "--format", "json", "--top", "20"],
                                        capture_output=True, check=True).stdout)
        check(r["result"]["isError"] is False and sc.get("ops") == cli["ops"] and len(cli["ops"]) == 20
              and "40000 ops (the 20 with the most self time listed)" in r["result"]["content"][0]["text"],
              "large: summary top 20 equals aiprof summary --top 20: %r" % r["result"]["content"][0]["text"])
        r = c.call("tools/call", {"name": "summary", "arguments": {"trace": "t2", "top": -1}})
        check(r.get("error", {}).get("code") == -32602, "large: summary top -1 refused: %r" % str(r)[:200])
        r = c.call("resources/read", {"uri": "aiprof://trace/t2"})
        check(r.get("error", {}).get("code") == -32603 and "over the 8.0 MiB" in r["error"]["message"],
              "large: a resource too big is an error: %r" % str(r)[:300])
        check(c.call("ping").get("result") == {}, "large: still serving")
        check(c.close() == 0, "large: exits 0")


def validate_like_the_cli(aiprof, data):
    """The validate tool and `aiprof validate` run one sequence
    (src/session/validate_runs.h): on a real pair whose fix cannot be
    inferred (defensive_clone), both give the same verdicts, figures and
    notes, the note saying why no fix was inferred included (the tool left it
    out before), each naming its own argument; with a scenario, the same
    prediction."""
    pairs = os.path.join(os.path.abspath(data), "pairs")
    before = os.path.join(pairs, "defensive_clone_before.pt.trace.json.gz")
    after = os.path.join(pairs, "defensive_clone_after.pt.trace.json.gz")
    c = Client(aiprof, [data])
    c.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "test", "version": "0"}})
    tb = c.tool("load_trace", path=before)["result"]["structuredContent"]["trace"]
    ta = c.tool("load_trace", path=after)["result"]["structuredContent"]["trace"]
    for extra in [{}, {"scenario": "remove aten::clone"}]:
        r = c.tool("validate", before=tb, after=ta, **extra)
        tool = r["result"]["structuredContent"]
        flags = sum((["--" + k, v] for k, v in extra.items()), [])
        cli = json.loads(subprocess.run([aiprof, "validate", "--before", before, "--after", after, "--format", "json",
                                         *flags], capture_output=True, check=True).stdout)
        named = json.loads(json.dumps(cli).replace("name it with --fix-id", "name it with 'fix_id'"))
        check(tool == named, "validate %r equals aiprof validate %r: only in the tool %r, only in the CLI %r" % (
            extra, flags, [k for k in tool if tool.get(k) != named.get(k)], [n for n in named.get("notes", [])
                                                                            if n not in tool.get("notes", [])]))
        if not extra:
            check(any("could not be inferred" in n and "name it with 'fix_id'" in n for n in tool.get("notes", [])),
                  "validate: the tool says why no fix was inferred, naming 'fix_id': %r" % tool.get("notes"))
        else:
            check("prediction" in tool and tool["prediction"] == cli.get("prediction"),
                  "validate with a scenario: the CLI's prediction")
    check(c.close() == 0, "the server ends at end of input")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    sample = os.path.join(os.path.abspath(a.data), "convnet_bs8_channels_last.kineto.json")
    c = Client(a.aiprof, [a.data])

    r = c.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "test", "version": "0"}})
    check(r["result"]["protocolVersion"] == "2025-06-18" and "tools" in r["result"]["capabilities"],
          "initialize: %r" % r)
    c.notify("notifications/initialized")  # no reply: the next reply answers the next request
    r = c.call("ping")
    check(r.get("result") == {}, "ping")
    r = c.call("tools/list")
    names = sorted(t["name"] for t in r["result"]["tools"])
    check(names == ["analyze", "diagnose", "diff", "list_traces", "load_trace", "query", "schema", "suggest", "summary",
                    "unload_trace", "validate", "whatif"],
          "tools: %s" % names)
    check(all(t["inputSchema"]["type"] == "object" for t in r["result"]["tools"]), "schemas are objects")
    # Every listed tool answers (one table lists and dispatches them): called
    # with no arguments, each is an answer or a missing-argument error,
    # never "no tool named".
    for t in r["result"]["tools"]:
        if t["name"] == "list_traces":
            continue
        e = c.tool(t["name"]).get("error", {})
        required = t["inputSchema"].get("required", [])
        check(e.get("code") == -32602 and "no tool named" not in e.get("message", "") and
              ("'%s'" % required[0]) in e.get("message", ""),
              "%s without arguments names its first required argument %r: %r" % (t["name"], required[:1], e))

    r = c.tool("load_trace", path=sample)
    check(r["result"]["isError"] is False and r["result"]["structuredContent"]["trace"] == "t1", "load: %r" % r)
    tid = r["result"]["structuredContent"]["trace"]

    r = c.tool("summary", trace=tid)
    got = r["result"]["structuredContent"]
    cli = json.loads(subprocess.run([a.aiprof, "summary", sample, "--format", "json", "--top", "0"],
                                    capture_output=True, check=True).stdout)
    check(got["totals"] == cli["totals"] and got["ops"] == cli["ops"], "summary equals aiprof summary")

    r = c.tool("query", trace=tid, sql="SELECT count(*) AS n FROM slices")
    check(r["result"]["structuredContent"]["rows"] == [[cli["totals"]["slices"]]], "query: %r" % r)
    r = c.tool("query", trace=tid, sql="SELECT id FROM slices", max_rows=3)
    sc = r["result"]["structuredContent"]
    check(len(sc["rows"]) == 3 and sc["truncated"] is True and "cut at max_rows 3" in r["result"]["content"][0]["text"],
          "row limit reported: %r" % r["result"]["content"])
    # A NUL in the SQL: a tool error at once (the engine looped for ever, trial_serve2 S6).
    r = c.tool("query", trace=tid, sql="SELECT 1\u0000")
    check(r["result"]["isError"] is True and "NUL byte" in r["result"]["content"][0]["text"],
          "a NUL in the SQL is a tool error: %r" % r["result"]["content"])
    r = c.tool("query", trace=tid, sql="DELETE FROM slices")
    check(r["result"]["isError"] is True and "may not be modified" in r["result"]["content"][0]["text"],
          "write refused as a tool error: %r" % r)
    r = c.tool("query", trace=tid, sql="ATTACH DATABASE '/tmp/x_mcp.db' AS x")
    check(r["result"]["isError"] is True and "not authorized" in r["result"]["content"][0]["text"], "attach refused")

    r = c.tool("analyze", trace=tid, only=["steps", "breakdown"])
    cli_analyze = json.loads(subprocess.run([a.aiprof, "analyze", sample, "--format", "json", "--only", "steps,breakdown"],
                                            capture_output=True, check=True).stdout)
    check(r["result"]["structuredContent"] == cli_analyze, "analyze equals aiprof analyze --only steps,breakdown")
    r = c.tool("diagnose", trace=tid)
    cli_diag = json.loads(subprocess.run([a.aiprof, "diagnose", sample, "--format", "json"],
                                         capture_output=True, check=True).stdout)
    check(r["result"]["structuredContent"] == cli_diag, "diagnose equals aiprof diagnose --format json")
    r = c.tool("suggest", trace=tid, target="throughput", constraints="effort<=medium")
    cli_sug = json.loads(subprocess.run([a.aiprof, "suggest", sample, "--target", "throughput", "--constraints",
                                         "effort<=medium", "--format", "json"], capture_output=True, check=True).stdout)
    check(r["result"]["structuredContent"] == cli_sug, "suggest equals aiprof suggest --format json")
    check(c.tool("suggest", trace=tid, target="speed")["error"]["code"] == -32602, "bad target")
    check(c.tool("suggest", trace=tid, constraints="memory<<3")["error"]["code"] == -32602, "bad constraints")
    r = c.tool("analyze", trace=tid, only=["no_such_analysis"])
    check(r.get("error", {}).get("code") == -32602 and "no_such_analysis" in r["error"]["message"], "bad analysis name")

    # validate: the ResNet50 pair (num_workers 0 -> 4), each read by its own
    # session, equals aiprof validate on the same files.
    before = os.path.join(os.path.abspath(a.data), "resnet50_num_workers_0.pt.trace.json.gz")
    after = os.path.join(os.path.abspath(a.data), "resnet50_num_workers_4.pt.trace.json.gz")
    tb = c.tool("load_trace", path=before)["result"]["structuredContent"]["trace"]
    ta = c.tool("load_trace", path=after)["result"]["structuredContent"]["trace"]
    r = c.tool("validate", before=tb, after=ta)
    cli_val = json.loads(subprocess.run([a.aiprof, "validate", "--before", before, "--after", after, "--format", "json"],
                                        capture_output=True, check=True).stdout)
    check(r["result"]["structuredContent"] == cli_val and cli_val["overall"] == "improved",
          "validate equals aiprof validate (%s)" % r["result"]["content"][0]["text"])
    check("prediction" in r["result"]["structuredContent"], "validate carries the prediction for the fix")
    r = c.tool("validate", before=tb, after=ta, fix_id="no_such_fix")
    check(r["result"]["isError"] is True and "no_such_fix" in r["result"]["content"][0]["text"],
          "validate: an unknown fix id is a tool error: %r" % r["result"]["content"])
    check(c.tool("validate", before=tb)["error"]["code"] == -32602, "validate needs 'after'")
    r = c.tool("validate", before=tb, after=ta, unit="nosuchspan")
    text = r.get("result", {}).get("content", [{}])[0].get("text", "")
    check(r.get("result", {}).get("isError") and "no span named 'nosuchspan'" in text and text.count(before) == 1,
          "a unit with no samples: a tool error naming the trace once: %r" % text)
    check(c.tool("validate", before=tb, after=ta, alpha=2)["error"]["code"] == -32602, "validate: alpha range")
    # diff: the same pair, the document of aiprof diff as structured content.
    r = c.tool("diff", a=tb, b=ta)
    cli_diff = json.loads(subprocess.run([a.aiprof, "diff", before, after, "--format", "json"],
                                         capture_output=True, check=True).stdout)
    check(r["result"]["structuredContent"] == cli_diff and "DataLoader" in r["result"]["content"][0]["text"] + json.dumps(cli_diff),
          "diff equals aiprof diff (%s)" % r["result"]["content"][0]["text"])
    check("shapes" in cli_diff["sections"] and r["result"]["structuredContent"]["sections"].get("shapes") ==
          cli_diff["sections"]["shapes"], "diff carries the CLI's 'By shape' section")
    # The call-site pair (test/data/diff): the By shape rows keyed by call site, as the CLI's.
    ca = os.path.join(os.path.abspath(a.data), "diff", "callsite_a.pt.trace.json.gz")
    cb = os.path.join(os.path.abspath(a.data), "diff", "callsite_b.pt.trace.json.gz")
    ida = c.tool("load_trace", path=ca)["result"]["structuredContent"]["trace"]
    idb = c.tool("load_trace", path=cb)["result"]["structuredContent"]["trace"]
    r2 = c.tool("diff", a=ida, b=idb)
    cli2 = json.loads(subprocess.run([a.aiprof, "diff", ca, cb, "--format", "json"],
                                     capture_output=True, check=True).stdout)
    site_rows = [row for block in cli2["sections"]["shapes"]["blocks"] if block.get("key") == "shapes"
                 for row in block["rows"] if row["match"] == "call site + shape"]
    check(r2["result"]["structuredContent"] == cli2 and len(site_rows) >= 2,
          "diff of the call-site pair equals aiprof diff, %d rows matched by call site" % len(site_rows))
    # The changes ranking names the call-site row, in the tool's result as in the CLI's (one document).
    mcp_changes = [row for block in r2["result"]["structuredContent"]["sections"]["changes"]["blocks"]
                   if block.get("key") == "changes" for row in block["rows"]]
    check(mcp_changes and mcp_changes[0]["kind"] == "op row" and mcp_changes[0]["site"].endswith(("load_first", "load_second"))
          and mcp_changes[0]["path"].endswith("aten::copy_"),
          "diff tool: the call-site pair's largest change is a copy_ call-site row (%s)"
          % ((mcp_changes or [{}])[0].get("site")))
    # warmup_steps: both runs over one window, as the CLI's --warmup-steps;
    # the loaded sessions keep their detected warm-up for the next call.
    r3 = c.tool("diff", a=tb, b=ta, warmup_steps=2)
    cli3 = json.loads(subprocess.run([a.aiprof, "diff", before, after, "--format", "json", "--warmup-steps", "2"],
                                     capture_output=True, check=True).stdout)
    check(r3["result"]["structuredContent"] == cli3 and cli3 != cli_diff,
          "diff with warmup_steps 2 equals aiprof diff --warmup-steps 2 (and differs from the detected window)")
    check(c.tool("diff", a=tb, b=ta)["result"]["structuredContent"] == cli_diff,
          "diff without warmup_steps after one with it: the detected window again")
    check(c.tool("diff", a=tb, b=ta, warmup_steps=-1)["error"]["code"] == -32602, "diff: warmup_steps range")
    check(c.tool("diff", a=tb)["error"]["code"] == -32602, "diff needs 'b'")
    check(c.tool("diff", a=tb, b=ta, top=0)["error"]["code"] == -32602, "diff: top range")
    r = c.tool("validate", before=tb, after=ta, unit="no_such_span")
    check(r["result"]["isError"] is True, "validate: no samples of that unit is a tool error: %r" % r["result"]["content"])

    # whatif: the scenarios of one call equal aiprof whatif on the same file;
    # a clause matching nothing reproduces the measured steps.
    scenarios = ["remove-idle data_loading", "scale aten:: 0.5", "remove no_such_op_anywhere"]
    r = c.tool("whatif", trace=tb, scenario=scenarios)
    cli_whatif = json.loads(subprocess.run([a.aiprof, "whatif", before, "--format", "json",
                                            *sum((["--scenario", s] for s in scenarios), [])],
                                           capture_output=True, check=True).stdout)
    check(r["result"]["structuredContent"] == cli_whatif, "whatif equals aiprof whatif --format json")
    same = r["result"]["structuredContent"]["scenarios"][2]
    check(same["steady_steps"] > 0 and same["predicted_ns"] == same["measured_ns"] and
          all(s["predicted_ns"] == s["measured_ns"] for s in same["steps"]), "whatif: no change, no gain")
    check("time base: step wall time" in r["result"]["content"][0]["text"], "whatif text names its time base")
    r = c.tool("whatif", trace=tid, scenario="scale aten::mm x")
    check(r.get("error", {}).get("code") == -32602 and "FACTOR" in r["error"]["message"], "whatif: bad clause %r" % r)
    check(c.tool("whatif", trace=tid, scenario=[])["error"]["code"] == -32602, "whatif: no scenario")
    check(c.tool("whatif", trace=tid, scenario=["remove x"] * 17)["error"]["code"] == -32602, "whatif: 17 scenarios")
    check(c.tool("whatif", trace=tid, scenario=[3])["error"]["code"] == -32602, "whatif: not strings")
    r = c.tool("whatif", trace=tid, scenario="device NoSuchGpu from A100")
    check(r.get("error", {}).get("code") == -32602 and "'device NoSuchGpu from A100'" in r["error"]["message"],
          "whatif: unknown device names the clause %r" % r)
    r = c.tool("whatif", trace=tb, scenario="device H100 from A100")
    notes = r.get("result", {}).get("structuredContent", {}).get("scenarios", [{}])[0].get("notes", [])
    check(len(notes) == 1 and notes[0].startswith("device H100-SXM5-80GB (from A100-SXM4-80GB)"),
          "whatif: device clause resolved from the devices file, its note carried (%r)" % notes)

    r = c.call("resources/list")
    check([x["uri"] for x in r["result"]["resources"]] == ["aiprof://trace/t%d" % k for k in range(1, 6)],
          "resources: %r" % r)
    # A listed resource reads: the trace's summary (the summary tool's
    # document); an unknown one is the specification's -32002.
    r = c.call("resources/read", {"uri": "aiprof://trace/t1"})
    contents = r.get("result", {}).get("contents", [{}])
    summary = c.tool("summary", trace="t1")["result"]["structuredContent"]
    check(len(contents) == 1 and contents[0].get("mimeType") == "application/json"
          and json.loads(contents[0].get("text", "null")) == summary, "resources/read gives the summary: %r" % str(r)[:200])
    r = c.call("resources/read", {"uri": "aiprof://trace/t99"})
    check(r.get("error", {}).get("code") == -32002, "an unknown resource: %r" % r)
    check(c.call("resources/templates/list").get("result") == {"resourceTemplates": []}, "no resource templates")
    r = c.tool("list_traces")
    check(r["result"]["structuredContent"]["traces"][0]["path"] == sample, "list_traces")

    # Confinement: outside --allow, and a way out through '..'.
    for path in ["/etc/passwd", os.path.join(a.data, "..", "README.md"), os.path.join(a.data, "missing.json")]:
        r = c.tool("load_trace", path=path)
        check(r.get("error", {}).get("code") == -32602, "refused path %s: %r" % (path, r))
    check("outside the directories" in c.tool("load_trace", path="/etc/passwd")["error"]["message"], "says why")
    # Whether a path outside exists is not told: a missing one gets the same answer.
    r = c.tool("load_trace", path="/etc/no_such_file_aiprof")
    check("outside the directories" in r.get("error", {}).get("message", ""), "a missing path outside: %r" % r)
    # A named pipe inside an allowed folder is refused, not opened (the CLI
    # copies a pipe it is given; a server must not block on one).
    with tempfile.TemporaryDirectory() as pipes:
        os.mkfifo(os.path.join(pipes, "p.json"))
        f = Client(a.aiprof, [pipes])
        watchdog = threading.Timer(60, f.p.kill)  # a server blocked opening the pipe fails, not hangs
        watchdog.start()
        f.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "test", "version": "0"}})
        f.notify("notifications/initialized")
        r = f.tool("load_trace", path=os.path.join(pipes, "p.json"))
        check(r.get("result", {}).get("isError") and "not a regular file" in r["result"]["content"][0]["text"],
              "a named pipe is refused: %r" % r)
        check(f.close() == 0, "the pipe's server exits cleanly")
        watchdog.cancel()
    # A NUL byte would make the OS read a shorter path (sample.json\0.png loaded sample.json).
    r = c.tool("load_trace", path=sample + "\u0000.png")
    check(r.get("error", {}).get("code") == -32602 and "NUL" in r["error"]["message"], "a path with a NUL byte: %r" % r)

    # Protocol errors; the server keeps serving after each.
    check(c.call("no/such/method")["error"]["code"] == -32601, "unknown method")
    check(c.tool("no_such_tool")["error"]["code"] == -32602, "unknown tool")
    check(c.tool("summary")["error"]["code"] == -32602, "missing trace argument")
    check(c.tool("summary", trace="t99")["error"]["code"] == -32602, "unknown trace")
    check(c.tool("query", trace=tid, sql="SELECT 1", max_rows=0)["error"]["code"] == -32602, "max_rows range")
    check(c.call("tools/call", {"name": "summary", "arguments": [1]})["error"]["code"] == -32602, "arguments not object")
    r = c.send_raw("{not json")
    check(r["error"]["code"] == -32700 and r["id"] is None, "parse error: %r" % r)
    r = c.send_raw(json.dumps({"jsonrpc": "2.0", "id": 5}))
    check(r["error"]["code"] == -32600 and r["id"] == 5, "no method: %r" % r)
    r = c.send_raw(json.dumps({"jsonrpc": "2.0", "id": "s-1", "method": "ping"}))
    check(r == {"jsonrpc": "2.0", "id": "s-1", "result": {}}, "string ids echoed: %r" % r)
    r = c.call("ping")
    check(r.get("result") == {}, "still serving")
    # JSON-RPC: the version member is required; a response from the client
    # gets no answer; arguments of the wrong type or unknown are refused.
    r = c.send_raw(json.dumps({"id": 6, "method": "ping"}))
    check(r.get("error", {}).get("code") == -32600 and r["id"] == 6, "no jsonrpc member: %r" % r)
    c.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": 77, "result": {}}) + "\n").encode())
    # tools/list goes through the worker after the response (ping would not:
    # it is answered on the reading thread at once), so the next reply read
    # is the list's, not one for id 77.
    r = c.call("tools/list")
    check("tools" in r.get("result", {}), "a response from the client is not answered")
    r = c.tool("analyze", trace=tid, only="gaps")
    check(r.get("error", {}).get("code") == -32602 and "'only' must be an array" in r["error"]["message"],
          "a wrongly typed argument: %r" % r)
    r = c.tool("summary", trace=tid, limit=3)
    check(r.get("error", {}).get("code") == -32602 and "takes no argument 'limit'" in r["error"]["message"],
          "an unknown argument: %r" % r)
    r = c.tool("analyze", trace=tid, only=["gapz"])
    check("no analysis named gapz (there are: " in r.get("error", {}).get("message", ""), "names the analyses: %r" % r)
    # Batches: not in the protocol versions offered (2025-06-18 removed
    # them; 2025-03-26, which required them, is answered with 2025-06-18).
    for batch in ([{"jsonrpc": "2.0", "id": 10, "method": "ping"}], []):
        r = c.send_raw(json.dumps(batch))
        check(isinstance(r, dict) and r["error"]["code"] == -32600 and r["id"] is None
              and "batches are not supported" in r["error"]["message"], "a batch is refused: %r" % r)
    old = Client(a.aiprof, [a.data])
    r = old.call("initialize", {"protocolVersion": "2025-03-26", "capabilities": {},
                                "clientInfo": {"name": "t", "version": "1"}})
    check(r["result"]["protocolVersion"] == "2025-06-18", "2025-03-26 (batches required) is not offered: %r" % r)
    check(old.close() == 0, "the second client's server exits 0")

    # Cancellation and the queue: an endless query runs; ping is answered
    # meanwhile; 32 requests wait behind it and the 33rd is refused (busy);
    # notifications/cancelled stops the query, which gets no response, and
    # the 32 waiting are answered in order.
    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"
    c.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": "slow", "method": "tools/call",
                                 "params": {"name": "query", "arguments": {"trace": tid, "sql": endless}}}) + "\n").encode())
    c.p.stdin.flush()
    time.sleep(0.3)  # the worker has taken it (on a slow machine perhaps not yet: see below)
    r = c.send_raw(json.dumps({"jsonrpc": "2.0", "id": "p", "method": "ping"}))
    check(r == {"jsonrpc": "2.0", "id": "p", "result": {}}, "ping answered while a query runs: %r" % r)
    for i in range(33):
        c.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/list"}) + "\n").encode())
    c.p.stdin.flush()
    first = json.loads(c.p.stdout.readline())  # a busy answer comes at once, before any list
    check(first.get("id") in (1031, 1032) and first.get("error", {}).get("code") == -32000,
          "the 33rd waiting request: busy: %r" % first)
    c.p.stdin.write((json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                 "params": {"requestId": "slow", "reason": "test"}}) + "\n").encode())
    c.p.stdin.flush()
    # The rest: every waiting request answered, in order. (Had the worker
    # not yet taken the query, one more would have been busy: accepted.)
    replies = [first]
    while len(replies) < 33:
        replies.append(json.loads(c.p.stdout.readline()))
    busy = sorted(x["id"] for x in replies if "error" in x)
    listed = [x["id"] for x in replies if "result" in x]
    check(busy in ([1032], [1031, 1032]) and listed == list(range(1000, 1033 - len(busy)))
          and all(x["id"] != "slow" for x in replies),
          "after the cancellation the waiting requests are answered in order, none for the cancelled one: "
          "busy %s, answered %s..%s" % (busy, listed[:1], listed[-1:]))
    r = c.call("ping")
    check(r.get("result") == {}, "still serving after a cancellation")
    check(c.close() == 0, "exits 0 at end of input")

    hostile_names(a.aiprof, sample)
    text_content_carries_the_data(a.aiprof, sample)
    reload_and_unload(a.aiprof, sample)
    jsonrpc_ids(a.aiprof, sample)
    large_answers(a.aiprof, a.data)
    relative_missing_path(a.aiprof)
    validate_like_the_cli(a.aiprof, a.data)
    rc = subprocess.run([a.aiprof, "mcp", "--allow", "/nonexistent_dir"], capture_output=True, input=b"").returncode
    check(rc == 1, "--allow of a missing directory exits 1")
    print("%d checks, %d failures" % (CHECKS[0], len(FAILURES)))
    return 1 if FAILURES or CHECKS[0] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
