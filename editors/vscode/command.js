// Which typed-pallas the extension starts, and why: the setting typed-pallas.command when
// the user set it; else the typed-pallas installed beside the Python interpreter selected
// for the workspace (the Python extension's, or python.defaultInterpreterPath); else the
// one on PATH. No VS Code API here, so that node tests it alone (test/command.test.js).
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const DEFAULT_COMMAND = ["typed-pallas", "lsp"];

// The interpreter path a python.defaultInterpreterPath value names, or undefined: its
// ${workspaceFolder} and ~ expanded, relative to the workspace folder; a bare name
// ("python", the setting's default) names no folder to look in.
function expandInterpreterPath(value, folder, home, platform = process.platform) {
  if (typeof value !== "string" || !value.trim()) return undefined;
  let p = value.trim();
  if (folder) p = p.replace(/\$\{workspaceFolder\}/g, folder);
  if (home && (p === "~" || p.startsWith("~/") || p.startsWith("~\\"))) p = home + p.slice(1);
  if (p.includes("${")) return undefined; // a variable VS Code did not tell us
  const explicit = p.includes("/") || p.includes("\\");
  if (!explicit) return undefined;
  const style = platform === "win32" ? path.win32 : path.posix;
  if (!style.isAbsolute(p)) return folder ? style.resolve(folder, p) : undefined;
  return p;
}

// Where the typed-pallas script of an interpreter's environment is: beside it (a venv's
// bin/, a venv's Scripts\ on Windows), or in Scripts\ beside a Windows base install.
function scriptsBeside(interpreter, platform) {
  const windows = platform === "win32";
  const style = windows ? path.win32 : path.posix;
  const dir = style.dirname(interpreter);
  if (!windows) return [style.join(dir, "typed-pallas")];
  return [style.join(dir, "typed-pallas.exe"), style.join(dir, "Scripts", "typed-pallas.exe")];
}

// The command to start and where it came from. `configured`: the user's typed-pallas.command
// (undefined when not set); `interpreter`: the selected interpreter's path, if known;
// `isFile`: whether a path is a file (fs by default).
function resolveCommand({ configured, interpreter, platform = process.platform, isFile = isAFile }) {
  if (Array.isArray(configured) && configured.length > 0) {
    return { command: configured, source: "the setting typed-pallas.command" };
  }
  if (interpreter) {
    for (const script of scriptsBeside(interpreter, platform)) {
      if (isFile(script)) {
        return { command: [script, ...DEFAULT_COMMAND.slice(1)], source: `the interpreter ${interpreter}` };
      }
    }
    return {
      command: DEFAULT_COMMAND,
      source: `PATH (no typed-pallas beside the interpreter ${interpreter})`,
    };
  }
  return { command: DEFAULT_COMMAND, source: "PATH (no interpreter selected)" };
}

function isAFile(p) {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

module.exports = { DEFAULT_COMMAND, expandInterpreterPath, resolveCommand, scriptsBeside };
