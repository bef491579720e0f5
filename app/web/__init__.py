"""The reviewer web page under /review: server-rendered pages over the review queue service."""
