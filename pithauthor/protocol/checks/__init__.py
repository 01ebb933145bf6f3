"""The checks of every document pith verifies, one module per document (pure), offered by
`pithauthor.protocol`: `record` (with its receipt and links), `bundle`, `state`, `event`
(with the identity of its signer), `fields` (what each verdict speaks for), and the local `merge`.
"""
