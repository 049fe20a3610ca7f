"""Tasks: submitting envelopes (`new`, `init`, `validate`), reading them (`show`, `ls`, `ready`,
`log`), the rules that relate a task to the others, and the lint."""
