#!/usr/bin/env python3
"""A loopback OpenAI Responses API for the Codex contract tests (standard library only).

    mock_openai.py PORT PORT_FILE PLAN_FILE LOG_FILE

Listens on 127.0.0.1 at PORT (0: a port the kernel picks), and writes the port to PORT_FILE
once it accepts connections. Answers POST /v1/responses as server-sent events (the stream Codex reads:
response.created, response.output_item.added/done for each output item, response.completed),
and 404 to anything else. Every request is logged to LOG_FILE, one JSON line each.

The plan (PLAN_FILE, JSON) is an object whose keys are texts and whose values are lists of
steps. A request belongs to the key found in its latest user message that contains one (the
prompt of `codex exec`, a prompt typed in the TUI, the message spawn_agent gave a sub-agent),
and gets the step whose index is the number of tool calls already in the request after that
message: each conversation, the main one and every sub-agent's, follows its own list whatever
order the requests come in, and a later prompt in the same thread starts its own list. Steps:
  {"text": T}                      a final answer
  {"exec": CMD}                    a call of the shell tool exec_command with {"cmd": CMD}
  {"spawn": MESSAGE}               a call of spawn_agent (namespace multi_agent_v1)
  {"wait": true}                   wait_agent on the agent the last spawn_agent started
  {"tool": NAME, "namespace": NS, "args": {...}}   any other function call
  {"stall": SECONDS}               headers sent, then nothing: a turn that hangs
A request whose conversation has no key, or has run past its list, gets the text "ok".
"""
import json
import os
import re
import sys
import time

# the shared part, beside this dir; no bytecode written into the source tree
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mockhttp  # noqa: E402

PORT = int(sys.argv[1])
PORT_FILE, PLAN_FILE, LOG_FILE = sys.argv[2:5]
with open(PLAN_FILE) as f:
    PLAN = json.load(f)
CALL_TYPES = ("function_call", "custom_tool_call", "local_shell_call", "tool_search_call")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def text_of(item):
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def output_text(item):
    out = item.get("output")
    if isinstance(out, str):
        return out
    return json.dumps(out)


def step_for(items):
    """(key, index, step) for the request's input items."""
    for i in range(len(items) - 1, -1, -1):
        it = items[i]
        if it.get("type") != "message" or it.get("role") != "user":
            continue
        text = text_of(it)
        for key, steps in PLAN.items():
            if key in text:
                n = sum(1 for x in items[i + 1:] if x.get("type") in CALL_TYPES)
                return key, n, steps[n] if n < len(steps) else {"text": "ok"}
    return None, 0, {"text": "ok"}


def spawned_agent(items):
    """The agent id the latest spawn_agent call's output names."""
    calls = {x.get("call_id"): x for x in items if x.get("type") == "function_call"}
    for x in reversed(items):
        if x.get("type") != "function_call_output":
            continue
        call = calls.get(x.get("call_id"))
        if call is None or call.get("name") != "spawn_agent":
            continue
        m = UUID.search(output_text(x))
        if m:
            return m.group(0)
    return None


def call_of(step, items, key, n):
    """The function_call output item a tool step asks for."""
    if "exec" in step:
        name, ns, args = "exec_command", None, {"cmd": step["exec"], "yield_time_ms": 10000}
    elif "spawn" in step:
        name, ns, args = "spawn_agent", "multi_agent_v1", {"message": step["spawn"]}
    elif "wait" in step:
        name, ns = "wait_agent", "multi_agent_v1"
        args = {"targets": [spawned_agent(items) or "none"], "timeout_ms": 30000}
    else:
        name, ns, args = step["tool"], step.get("namespace"), step.get("args", {})
    call_id = "call_contract_%d_%d" % (abs(hash(key)) % 10**6, n)
    item = {"type": "function_call", "id": "fc_" + call_id, "status": "completed",
            "name": name, "arguments": json.dumps(args), "call_id": call_id}
    if ns:
        item["namespace"] = ns
    return item


class Handler(mockhttp.Handler):
    def do_GET(self):
        self.log(self.path, {}, None, None, None)
        self.reply_json({"error": {"type": "not_found", "message": self.path}}, 404)

    def do_POST(self):
        body, raw = self.read_json()
        if body is None:
            self.log(self.path, {}, None, None, {"error": "not JSON: %r" % raw[:80]})
            return self.reply_json({"error": {"type": "invalid_request_error", "message": "not JSON"}}, 400)
        path = self.path.split("?", 1)[0]
        if not path.endswith("/responses"):
            self.log(path, body, None, None, None)
            return self.reply_json({"error": {"type": "not_found", "message": path}}, 404)
        items = [x for x in body.get("input") or [] if isinstance(x, dict)]
        key, n, step = step_for(items)
        self.log(path, body, key, n, step)
        self.start_events()
        self.wfile.flush()
        if "stall" in step:
            time.sleep(float(step["stall"]))
            self.close_connection = True
            return
        rid = "resp_contract_%d" % int(time.time() * 1e6)

        def event(data):
            self.event(data["type"], data)

        if "text" in step:
            item = {"type": "message", "id": "msg_" + rid, "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": step["text"], "annotations": []}]}
        else:
            item = call_of(step, items, key, n)
        event({"type": "response.created", "response": {"id": rid, "status": "in_progress"}})
        event({"type": "response.output_item.added", "output_index": 0, "item": item})
        if item["type"] == "message":
            event({"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
                   "item_id": item["id"], "delta": step["text"]})
        event({"type": "response.output_item.done", "output_index": 0, "item": item})
        event({"type": "response.completed",
               "response": {"id": rid, "status": "completed",
                            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                                      "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                                      "total_tokens": 15}}})
        self.wfile.flush()
        self.close_connection = True

    def log(self, path, body, key, n, step):
        items = [x for x in body.get("input") or [] if isinstance(x, dict)]
        last = items[-1] if items else {}
        mockhttp.append_log(LOG_FILE, {
            "path": path, "model": body.get("model"), "thread": self.headers.get("thread-id"),
            "items": len(items), "conversation": key, "index": n, "step": step,
            "last": {"type": last.get("type"), "name": last.get("name"),
                     "output": output_text(last)[:300] if "output" in last else None}})


mockhttp.serve(Handler, PORT, PORT_FILE)
