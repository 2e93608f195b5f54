"""For bench/comments-gateway.sh: a new user's post with 100 comments, through the gateway;
prints the post's id. usage: post_with_comments.py GATEWAY_URL"""
import sys

from postly_suite.client import Client

gateway = Client.at(sys.argv[1])
token = gateway.register("Comment Bench")["accessToken"]
post = gateway.call_or_exit("POST", "/api/posts", token, {"title": "A post with a hundred comments", "content": "Read the comments below. " * 40, "status": "published"})
for index in range(100):
    gateway.call_or_exit("POST", f"/api/posts/{post['_id']}/comments", token, {"content": f"Comment number {index}: " + "well said, and more. " * 5})
print(post["_id"])
