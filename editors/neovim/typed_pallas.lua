-- typed-pallas's findings in Neovim 0.11+ (vim.lsp.config): put this in your init.lua.
-- It runs next to the Python server you use (pyright, basedpyright, pyrefly, ty):
-- Neovim attaches every enabled server to a buffer.
vim.lsp.config("typed_pallas", {
  cmd = { "typed-pallas", "lsp" },
  filetypes = { "python" },
  root_markers = { "pyproject.toml", "setup.cfg", "mypy.ini", ".git" },
})
vim.lsp.enable("typed_pallas")
