"""A source plugin that misbehaves once its task runs, as its config's `mode` says: `garbage` (a line
that is not JSON), `huge` (a 100 MB message), `silent` (never answers a poll), `exit` (exits at once
when started), `fork` (starts children, writing their pids to `pids.file`, then never answers),
`flaky` (its first three polls fail as retriable, then it emits one record a poll).

As a transformation, it fails every record whose value's `seq` is a multiple of 10."""

import json
import subprocess
import sys
import time


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    hello = json.loads(sys.stdin.readline())
    send({"type": "hello", "protocol": 1})
    role = hello["role"]
    config = {}
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if role == "transformation":
            if kind == "start":
                send({"type": "started"})
            elif kind == "transform":
                record = msg["record"]
                seq = ((record.get("value") or {}).get("payload") or {}).get("seq", 1)
                if seq % 10 == 0:
                    send({"type": "error", "retriable": False, "message": "seq %d refused" % seq})
                else:
                    send({"type": "transformed", "record": record})
            elif kind == "config_def":
                send({"type": "config_def", "keys": []})
            else:
                return
            continue
        if role == "connector":
            if kind == "config_def":
                send({"type": "config_def", "keys": [{"name": "mode", "type": "STRING"}]})
            elif kind == "validate":
                send({"type": "validate", "errors": {}})
            elif kind == "task_configs":
                send({"type": "task_configs", "tasks": [msg["config"]]})
            else:
                return
            continue
        if kind == "start":
            config = msg["config"]
            mode = config.get("mode")
            print("hostile task in mode", mode, file=sys.stderr, flush=True)
            if mode == "exit":
                sys.exit(3)
            if mode == "fork":
                children = [subprocess.Popen(["sleep", "600"]) for _ in range(3)]
                with open(config["pids.file"], "w") as f:
                    f.write("\n".join(str(c.pid) for c in children) + "\n")
            send({"type": "started"})
        elif kind == "poll":
            mode = config.get("mode")
            if mode == "garbage":
                sys.stdout.write("this is not a protocol message\n")
                sys.stdout.flush()
            elif mode == "flaky":
                polls = config.get("_polls", 0) + 1
                config["_polls"] = polls
                if polls <= 3:
                    send({"type": "error", "retriable": True, "message": "device busy, poll %d" % polls})
                else:
                    send({"type": "records", "records": [{
                        "topic": config["topic"], "source_partition": {"p": 0},
                        "source_offset": {"n": polls}, "value": {"schema": None, "payload": polls}}],
                        "idle_ms": 50})
            elif mode == "huge":
                sys.stdout.write('{"type": "records", "records": [], "padding": "')
                chunk = "x" * (1024 * 1024)
                for _ in range(100):
                    sys.stdout.write(chunk)
                sys.stdout.write('"}\n')
                sys.stdout.flush()
            else:
                time.sleep(600)
        elif kind == "stop":
            return


if __name__ == "__main__":
    main()
