// typed-pallas's findings in VS Code: starts `typed-pallas lsp` for Python files.
// Everything else (Pylance's own diagnostics) is left as it is. The server is the
// typed-pallas of the interpreter selected for the workspace (command.js says how it is
// chosen), started again when that selection or the setting changes.
const vscode = require("vscode");
const os = require("node:os");
const { LanguageClient } = require("vscode-languageclient/node");
const { expandInterpreterPath, resolveCommand } = require("./command");

let client;
let output;

// The interpreter selected for `folder`: the Python extension's (ms-python.python), else
// the setting python.defaultInterpreterPath; undefined when neither names one.
async function selectedInterpreter(folder) {
  const python = vscode.extensions.getExtension("ms-python.python");
  if (python) {
    try {
      const api = python.isActive ? python.exports : await python.activate();
      const environments = api && api.environments;
      if (environments && environments.getActiveEnvironmentPath) {
        const active = environments.getActiveEnvironmentPath(folder && folder.uri);
        const env = await environments.resolveEnvironment(active);
        const exe = env && env.executable && env.executable.uri && env.executable.uri.fsPath;
        if (exe) return exe;
      }
      const details = api && api.settings && api.settings.getExecutionDetails
        ? api.settings.getExecutionDetails(folder && folder.uri)
        : undefined;
      if (details && details.execCommand && details.execCommand.length === 1) {
        return details.execCommand[0]; // an interpreter, not a launcher ("conda run ...")
      }
    } catch (error) {
      output.appendLine(`typed-pallas: the Python extension gave no interpreter (${error})`);
    }
  }
  const setting = vscode.workspace
    .getConfiguration("python", folder && folder.uri)
    .get("defaultInterpreterPath");
  return expandInterpreterPath(setting, folder && folder.uri.fsPath, os.homedir());
}

async function start() {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const inspected = vscode.workspace.getConfiguration("typed-pallas").inspect("command");
  const configured =
    inspected?.workspaceFolderValue ?? inspected?.workspaceValue ?? inspected?.globalValue;
  const interpreter = configured ? undefined : await selectedInterpreter(folder);
  const { command: [command, ...args], source } = resolveCommand({ configured, interpreter });
  output.appendLine(`typed-pallas: starting ${[command, ...args].join(" ")} (from ${source})`);
  client = new LanguageClient(
    "typed-pallas",
    "typed-pallas",
    { command, args, options: { cwd: folder?.uri.fsPath } },
    { documentSelector: [{ scheme: "file", language: "python" }], outputChannel: output },
  );
  return client.start();
}

async function restart() {
  if (client) await client.stop();
  client = undefined;
  return start();
}

async function activate(context) {
  output = vscode.window.createOutputChannel("typed-pallas");
  context.subscriptions.push(output, { dispose: () => client && client.stop() });
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("typed-pallas.command") || e.affectsConfiguration("python.defaultInterpreterPath")) {
        restart();
      }
    }),
  );
  const python = vscode.extensions.getExtension("ms-python.python");
  if (python) {
    try {
      const api = python.isActive ? python.exports : await python.activate();
      const changed = api && api.environments && api.environments.onDidChangeActiveEnvironmentPath;
      if (changed) context.subscriptions.push(changed(() => restart()));
    } catch {
      // no events: the interpreter is read at start only
    }
  }
  return start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
