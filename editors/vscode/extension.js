// typed-pallas's findings in VS Code: starts `typed-pallas lsp` for Python files.
// Everything else (Pylance's own diagnostics) is left as it is.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const [command, ...args] = vscode.workspace
    .getConfiguration("typed-pallas")
    .get("command", ["typed-pallas", "lsp"]);
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  client = new LanguageClient(
    "typed-pallas",
    "typed-pallas",
    { command, args, options: { cwd: folder } },
    { documentSelector: [{ scheme: "file", language: "python" }] },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
