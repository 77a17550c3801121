"""The Chats screen: list, transcript, message bubbles, composer, attachments, citations,
parameters and presets.
"""
