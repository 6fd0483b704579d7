"""``arena new-bot``: starter bots written from templates (package data)."""
