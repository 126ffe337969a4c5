// node --test editors/vscode/test/ (tests/lsp/test_editors.py runs it): which typed-pallas
// the extension starts, without VS Code.
"use strict";
const assert = require("node:assert/strict");
const test = require("node:test");
const { DEFAULT_COMMAND, expandInterpreterPath, resolveCommand } = require("../command");

const files = (...present) => (p) => present.includes(p);

test("the selected interpreter's typed-pallas is started", () => {
  const got = resolveCommand({
    configured: undefined,
    interpreter: "/proj/.venv/bin/python",
    platform: "linux",
    isFile: files("/proj/.venv/bin/typed-pallas", "/usr/bin/typed-pallas"),
  });
  assert.deepEqual(got.command, ["/proj/.venv/bin/typed-pallas", "lsp"]);
  assert.equal(got.source, "the interpreter /proj/.venv/bin/python");
});

test("on Windows: Scripts\\ beside a venv's python.exe, or under a base install", () => {
  const venv = resolveCommand({
    interpreter: "C:\\proj\\.venv\\Scripts\\python.exe",
    platform: "win32",
    isFile: files("C:\\proj\\.venv\\Scripts\\typed-pallas.exe"),
  });
  assert.deepEqual(venv.command, ["C:\\proj\\.venv\\Scripts\\typed-pallas.exe", "lsp"]);
  const base = resolveCommand({
    interpreter: "C:\\Python312\\python.exe",
    platform: "win32",
    isFile: files("C:\\Python312\\Scripts\\typed-pallas.exe"),
  });
  assert.deepEqual(base.command, ["C:\\Python312\\Scripts\\typed-pallas.exe", "lsp"]);
});

test("no typed-pallas beside the interpreter: the one on PATH", () => {
  const got = resolveCommand({
    interpreter: "/usr/bin/python3",
    platform: "linux",
    isFile: files("/proj/.venv/bin/typed-pallas"),
  });
  assert.deepEqual(got.command, DEFAULT_COMMAND);
  assert.equal(got.source, "PATH (no typed-pallas beside the interpreter /usr/bin/python3)");
});

test("no interpreter selected: the one on PATH", () => {
  const got = resolveCommand({ interpreter: undefined, platform: "linux", isFile: files() });
  assert.deepEqual(got, { command: ["typed-pallas", "lsp"], source: "PATH (no interpreter selected)" });
});

test("the user's typed-pallas.command wins over the interpreter", () => {
  const got = resolveCommand({
    configured: ["/opt/tp/bin/typed-pallas", "lsp", "src"],
    interpreter: "/proj/.venv/bin/python",
    platform: "linux",
    isFile: files("/proj/.venv/bin/typed-pallas"),
  });
  assert.deepEqual(got.command, ["/opt/tp/bin/typed-pallas", "lsp", "src"]);
  assert.equal(got.source, "the setting typed-pallas.command");
  // an empty list is no command: the interpreter's
  const empty = resolveCommand({
    configured: [],
    interpreter: "/proj/.venv/bin/python",
    platform: "linux",
    isFile: files("/proj/.venv/bin/typed-pallas"),
  });
  assert.deepEqual(empty.command, ["/proj/.venv/bin/typed-pallas", "lsp"]);
});

test("python.defaultInterpreterPath as VS Code writes it", () => {
  const expand = (v) => expandInterpreterPath(v, "/proj", "/home/me", "linux");
  assert.equal(expand("${workspaceFolder}/.venv/bin/python"), "/proj/.venv/bin/python");
  assert.equal(expand(".venv/bin/python"), "/proj/.venv/bin/python");
  assert.equal(expand("~/venvs/jax/bin/python"), "/home/me/venvs/jax/bin/python");
  assert.equal(expand("/usr/bin/python3"), "/usr/bin/python3");
  // the setting's default, a bare name: no folder to look in (PATH then)
  assert.equal(expand("python"), undefined);
  assert.equal(expand(""), undefined);
  assert.equal(expand(undefined), undefined);
  assert.equal(expand("${env:VIRTUAL_ENV}/bin/python"), undefined);
  assert.equal(
    expandInterpreterPath(".venv\\Scripts\\python.exe", "C:\\proj", "C:\\Users\\me", "win32"),
    "C:\\proj\\.venv\\Scripts\\python.exe",
  );
});
