import enum


class UsageContext(enum.Enum):
    OPENAI_API_SERVER = "OPENAI_API_SERVER"
