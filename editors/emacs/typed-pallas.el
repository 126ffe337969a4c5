;;; typed-pallas.el --- typed-pallas's findings in Emacs (eglot, or lsp-mode) -*- lexical-binding: t -*-

;; eglot (built into Emacs 29+) runs one server per buffer: this makes typed-pallas the
;; Python buffers' server.
(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               '((python-mode python-ts-mode) . ("typed-pallas" "lsp"))))

;; lsp-mode runs it next to another Python server (an add-on client).
(with-eval-after-load 'lsp-mode
  (lsp-register-client
   (make-lsp-client
    :new-connection (lsp-stdio-connection '("typed-pallas" "lsp"))
    :activation-fn (lsp-activate-on "python")
    :server-id 'typed-pallas
    :add-on? t)))

(provide 'typed-pallas)
;;; typed-pallas.el ends here
