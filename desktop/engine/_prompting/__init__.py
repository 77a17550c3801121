"""Turning a conversation into the prompt a model reads, and its answer back into parts.

Named ``_prompting`` (it was ``chat/``) because it is not the chat feature
(``desktop/chat``, conversations kept and shown): it is the text around one generation,
on the engine's side. Chat templates and the messages they read (``templates``,
``template_messages``, the Jinja sandbox ``jinja_env``), volatile system-prompt lines
left out of the reused prefix (``volatile``), grammars that constrain what is generated
(``grammar``), stop strings (``stop_strings``) and the parsing of tool calls out of the
generated text (``toolcalls``).
"""
