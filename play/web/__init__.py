"""The browser app of ``sixtysix serve`` (see :mod:`play.web.server`)."""
