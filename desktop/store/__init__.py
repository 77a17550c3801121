"""The local SQLite database: conversations (chats.py) and the schema it shares (db.py)."""
