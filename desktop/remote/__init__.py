"""Remote engines: an organization's OpenAI-compatible servers used as models here."""
