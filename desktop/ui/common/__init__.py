"""What several screens share: workers on threads, Qt item models, rich text and Markdown,
labels that fit, the clipboard, and core errors and words in the window's language.
"""
