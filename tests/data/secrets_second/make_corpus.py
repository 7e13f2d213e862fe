# ruff: noqa: SIM905, RUF005  (a data generator: long literal lines)
"""Generate the second secret corpus (positives.jsonl) of tests/data/secrets_second.

Every secret value is fresh random output of Python's ``secrets`` module shaped like
the credential it stands for (prefix, length, alphabet); none is a real credential.
Rerunning writes new values: the committed ``positives.jsonl`` is one run's output.
``negatives.txt`` is written by hand (not generated here).

    .venv/bin/python tests/data/secrets_second/make_corpus.py
"""

from __future__ import annotations

import base64
import json
import secrets
import string
import urllib.parse
import uuid
from pathlib import Path

AN = string.ascii_letters + string.digits
UP = string.ascii_uppercase + string.digits
LO = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
DIG = string.digits
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
BECH = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
URLSAFE = AN + "-_"
SYM = "!%*+-_.^~@"
WORDS = (
    "abandon ability able about above absent absorb abstract absurd abuse access accident "
    "account accuse achieve acid acoustic acquire across action actor actress actual adapt "
    "addict address adjust admit adult advance advice aerobic affair afford afraid again agent "
    "agree ahead airport aisle alarm album alcohol alert alien alley allow almost alone alpha "
    "already alter always amateur amazing among amount amused analyst anchor ancient anger "
    "angle angry animal ankle announce annual another answer antenna antique anxiety apart "
    "apology appear apple approve april arch arctic arena argue armed armor army around "
    "arrange arrest arrive arrow artefact artist artwork aspect assault asset assist assume "
    "asthma athlete atom attack attend attitude attract auction audit august aunt author auto "
    "autumn average avocado avoid awake aware awesome awful awkward axis badge bamboo banana "
    "barrel basket battle beach bean beauty bicycle biology blanket blossom bracket brave "
    "bridge broccoli bronze bubble budget buffalo cabbage cactus camera canal candy canvas "
    "carbon carpet castle catalog cereal chimney cinnamon circle clever cliff cluster coconut "
    "comfort copper cotton coyote cradle crystal cushion dolphin donkey dragon eagle eclipse "
    "elbow elephant engine escape fabric falcon festival fiction flamingo galaxy garlic "
    "giraffe glacier gorilla harbor hedgehog horizon island jaguar kangaroo kitchen lantern "
    "lemon lizard lobster magnet mango marble meadow mountain museum napkin noodle ocean "
    "orbit orchard oyster panda parrot peanut pelican pepper pioneer planet pudding pumpkin "
    "puzzle rabbit raccoon radar rocket saddle salmon satoshi scorpion shadow shrimp silver "
    "spider squirrel sunset swallow symbol tiger timber tomato tornado tunnel turtle umbrella "
    "unicorn valley velvet violin volcano wagon walnut whale window wolf yellow youth zebra"
).split()
NAMES = "lagune ofen tanne wolke kiesel faro brisa luna orso piano trovo sabio hibou".split()


def r(alphabet: str, n: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(n))


def hx(n: int) -> str:
    return r(HEX, n)


def b64(nbytes: int) -> str:
    return base64.b64encode(secrets.token_bytes(nbytes)).decode()


def b64u(nbytes: int) -> str:
    return base64.urlsafe_b64encode(secrets.token_bytes(nbytes)).decode().rstrip("=")


def b64j(obj: object) -> str:
    raw = json.dumps(obj, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def jwt(payload: dict, alg: str = "HS256") -> str:
    header = {"alg": alg, "typ": "JWT"}
    if alg == "RS256":
        header["kid"] = b64u(32)
    sig = b64u(256 if alg == "RS256" else 32)
    return f"{b64j(header)}.{b64j(payload)}.{sig}"


def pw(n: int = 14) -> str:
    """A random password: starts with a letter, no quotes, backslashes, '#', ',' or spaces."""
    return secrets.choice(string.ascii_letters) + r(AN + SYM, n - 1)


def upw(n: int = 18) -> str:
    """A password safe inside a URL's userinfo without escaping."""
    return secrets.choice(string.ascii_letters) + r(AN + "-_.~", n - 1)


def human_pw() -> str:
    """A memorable password of the kind people pick."""
    return (
        secrets.choice(NAMES).capitalize()
        + r(DIG, 2)
        + secrets.choice("!?*%")
        + secrets.choice(NAMES).capitalize()
    )


def words(n: int) -> str:
    return " ".join(secrets.choice(WORDS) for _ in range(n))


def uid() -> str:
    return str(uuid.UUID(bytes=secrets.token_bytes(16), version=4))


def pem_body(nbytes: int, width: int = 64) -> list[str]:
    raw = base64.b64encode(secrets.token_bytes(nbytes)).decode()
    return [raw[i : i + width] for i in range(0, len(raw), width)]


E: list[dict[str, str]] = []


def add(kind: str, lang: str, text: str, secret: str) -> None:
    assert secret in text, (kind, secret, text)
    E.append({"kind": kind, "lang": lang, "text": text, "secret": secret})


def build() -> None:  # one long list of cases
    # ---------------------------------------------------------------- cloud providers
    kid, ksec = "LTAI5t" + r(AN, 18), r(AN, 30)
    add(
        "alibaba_cloud_key",
        "en",
        f"[default]\naccess_key_id = {kid}\naccess_key_secret = {ksec}\nregion = cn-hangzhou",
        ksec,
    )
    kid, ksec = "LTAI5t" + r(AN, 18), r(AN, 30)
    add(
        "alibaba_cloud_key",
        "zh",
        f"阿里云的 AccessKey ID 是 {kid}，AccessKey Secret：{ksec}，帮我配置一下 aliyun cli",
        ksec,
    )
    s = r(AN, 32)
    add(
        "tencent_cloud_key",
        "zh",
        f"export TENCENTCLOUD_SECRET_ID=AKID{r(AN, 32)}\nexport TENCENTCLOUD_SECRET_KEY={s}",
        s,
    )
    s = r(URLSAFE, 44)
    add("ibm_cloud_api_key", "en", f"ibmcloud login --apikey {s} -r us-south -g default", s)
    s = r(AN, 64)
    add(
        "hetzner_token",
        "de",
        f"Mein Hetzner-Cloud-API-Token lautet {s}, kannst du damit den Server cx22 neu starten?",
        s,
    )
    s = hx(64)
    add(
        "linode_token",
        "en",
        f'Here is my terraform.tfvars.json: {{"linode_token": "{s}", "region": "eu-central"}}',
        s,
    )
    s = r(UP, 36)
    add("vultr_api_key", "fr", f"Voici ma clé API Vultr : {s} — ne la partage avec personne.", s)
    s = uid()
    add(
        "scaleway_secret_key",
        "fr",
        f"Mon fichier .env :\nSCW_ACCESS_KEY=SCW{r(UP, 17)}\nSCW_SECRET_KEY={s}\nSCW_DEFAULT_REGION=fr-par",
        s,
    )
    s = "dop_v1_" + hx(64)
    add("digitalocean_token", "en", f"doctl auth init --access-token {s}", s)
    s = "dop_v1_" + hx(64)
    add(
        "digitalocean_token",
        "es",
        f"Mi token de DigitalOcean es {s}, úsalo para el droplet de staging.",
        s,
    )
    s = "K005" + r(AN, 27)
    add("backblaze_b2_key", "en", f"b2 account authorize 005{hx(9)}0000000003 {s}", s)
    s = r(AN + "()<>:;[]{}+", 20)
    add("oracle_auth_token", "en", f"The OCI auth token for the registry login is {s}", s)
    s = pw(32)
    add(
        "openstack_password",
        "de",
        f"Meine clouds.yaml für OVH:\n```yaml\nclouds:\n  ovh:\n    auth:\n      auth_url: https://auth.cloud.ovh.net/v3\n      username: user-{r(LO, 12)}\n      password: {s}\n    region_name: GRA11\n```",
        s,
    )
    s = r(URLSAFE, 40)
    add(
        "cloudflare_api_token",
        "en",
        f'curl -s -H "Authorization: Bearer {s}" https://api.cloudflare.com/client/v4/user/tokens/verify',
        s,
    )
    s = hx(37)
    add("cloudflare_global_key", "pt", f"Chave global da Cloudflare: {s} (conta ana@exemplo.pt)", s)
    s = "fm2_" + b64u(150)
    add("flyio_token", "en", f'fly secrets list says FLY_API_TOKEN="FlyV1 {s}" is set', s)
    s = "nfp_" + r(AN, 36)
    add("netlify_token", "en", f"netlify deploy --auth {s} --prod --dir dist", s)
    s = r(AN, 24)
    add("vercel_token", "es", f"VERCEL_TOKEN => {s}", s)
    s = "rnd_" + r(AN, 32)
    add(
        "render_api_key", "it", f"La chiave API di Render è {s}, serve per il deploy automatico.", s
    )
    s = uid()
    add("heroku_api_key", "en", f"heroku config shows HEROKU_API_KEY={s} on the pipeline app", s)

    # ---------------------------------------------------------------- databases
    s = upw(20)
    add(
        "postgres_url",
        "en",
        f'Traceback (most recent call last):\n  File "/app/db.py", line 42, in connect\n    engine = create_engine("postgresql+psycopg2://app_rw:{s}@db-prod.internal:5432/orders")\nsqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server at "db-prod.internal" (10.0.3.12), port 5432 failed: FATAL:  password authentication failed for user "app_rw"',
        s,
    )
    s = pw(13)
    add(
        "mysql_password",
        "en",
        f"mysql -h 10.0.0.5 -u root -p'{s}' shop < dump.sql hangs forever",
        s,
    )
    s = pw(12)
    add(
        "mysql_password",
        "zh",
        f"我用 mysql -uadmin -p{s} -h rm-bp1xyz.mysql.rds.aliyuncs.com 连不上，怎么回事？",
        s,
    )
    s = upw(18)
    add(
        "postgres_url",
        "fr",
        f"psql 'postgres://analytics:{s}@pg.exemple.fr:5432/bi?sslmode=require' me renvoie une erreur de timeout",
        s,
    )
    s = upw(16)
    add(
        "mongodb_url",
        "es",
        f"La cadena de conexión es mongodb+srv://admin:{s}@cluster0.ab1cd.mongodb.net/tienda?retryWrites=true&w=majority",
        s,
    )
    s = upw(32)
    add(
        "redis_url",
        "de",
        f"In meiner .env steht:\nREDIS_URL=redis://default:{s}@redis-12345.c1.eu-central-1-1.ec2.cloud.redislabs.com:12345",
        s,
    )
    s = upw(15)
    add(
        "jdbc_password",
        "it",
        f"La stringa JDBC è jdbc:mysql://db.interno.it:3306/contabilita?user=report&password={s}&useSSL=true",
        s,
    )
    s = pw(18)
    add(
        "mssql_password",
        "en",
        f'var cs = "Server=tcp:sql-prod.example.net,1433;Database=Billing;User ID=billing_app;Password={s};Encrypt=True;";',
        s,
    )
    s = pw(20)
    add(
        "db_password_yaml",
        "ja",
        f"docker-compose.yml はこれです：\nservices:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_USER: app\n      POSTGRES_PASSWORD: {s}",
        s,
    )
    s = pw(16)
    add(
        "db_password_toml",
        "pt",
        f'Meu config.toml:\n[database]\nhost = "10.1.2.3"\nuser = "loja"\npassword = "{s}"\nport = 5432',
        s,
    )
    s = pw(16)
    add(
        "db_password_xml",
        "en",
        f'<Resource name="jdbc/Main" auth="Container" type="javax.sql.DataSource" username="svc_main" password="{s}" url="jdbc:postgresql://pg01:5432/main"/>',
        s,
    )
    s = pw(12)
    add(
        "oracle_password",
        "de",
        f"sqlplus system/{s}@//ora-prod:1521/ORCLPDB1 funktioniert seit dem Update nicht mehr",
        s,
    )
    s = pw(14)
    add("db_password_label", "zh", f"生产库的数据库密码：{s}，用户名是 root", s)
    s = human_pw()
    add(
        "db_password_prose",
        "en",
        f"the password for the staging postgres is {s} btw, don't tell Tom",
        s,
    )
    s = upw(16)
    add(
        "amqp_url",
        "en",
        f"2024-05-12T08:14:03Z ERROR worker-3 celery: Cannot connect to amqp://guest:{s}@rabbitmq.svc:5672//: [Errno 111] Connection refused.",
        s,
    )
    s = pw(16)
    add(
        "elastic_password",
        "en",
        f"curl -u elastic:{s} https://es01.internal:9200/_cat/indices?v",
        s,
    )
    s = upw(14)
    add(
        "postgres_url",
        "de",
        f"org.postgresql.util.PSQLException: FATAL: Passwort-Authentifizierung für Benutzer »app« fehlgeschlagen\n\tat org.postgresql.core.v3.ConnectionFactoryImpl.doAuthentication(ConnectionFactoryImpl.java:693)\n\tat com.zaxxer.hikari.pool.HikariPool.createPoolEntry(HikariPool.java:474)\nCaused by: url=jdbc:postgresql://db:5432/app?user=app&password={s}",
        s,
    )
    s = upw(14)
    add(
        "mysql_dsn",
        "en",
        f'panic: dial tcp: lookup db on 127.0.0.11:53: no such host (dsn="shop:{s}@tcp(db:3306)/shop?parseTime=true")\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:31 +0x1a5',
        s,
    )
    s = upw(20)
    add(
        "planetscale_password",
        "en",
        f"DATABASE_URL='mysql://{r(LO, 12)}:pscale_pw_{s}@aws.connect.psdb.cloud/shop?sslaccept=strict'",
        "pscale_pw_" + s,
    )

    # ---------------------------------------------------------------- private keys
    lines = ["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"] + pem_body(
        260, 70
    )
    body = "\n".join(lines)
    add(
        "openssh_private_key",
        "en",
        f"Can you check why this key is rejected?\n```\n-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\n```",
        lines[2],
    )
    lines = ["MIIEpAIBAAKCAQEA" + r(AN + "+/", 48)] + pem_body(600)
    body = "\n".join(lines)
    add(
        "rsa_private_key",
        "de",
        f"Hier der Schlüssel vom alten Server:\n-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----",
        lines[3],
    )
    lines = ["MHcCAQEEI" + r(AN + "+/", 55)] + pem_body(70)
    body = "\n".join(lines)
    add(
        "ec_private_key",
        "fr",
        f"Voici la clé du serveur :\n-----BEGIN EC PRIVATE KEY-----\n{body}\n-----END EC PRIVATE KEY-----",
        lines[1],
    )
    lines = pem_body(700)
    body = "\n".join(lines)
    add(
        "pgp_private_key",
        "en",
        f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQVYBG{r(AN, 58)}\n{body}\n=ab{r(AN, 2)}\n-----END PGP PRIVATE KEY BLOCK-----",
        lines[4],
    )
    s = "AGE-SECRET-KEY-1" + r(BECH, 58).upper()
    add(
        "age_secret_key",
        "en",
        f"# created: 2024-03-01T10:00:00Z\n# public key: age1{r(BECH, 58)}\n{s}",
        s,
    )
    s = "AGE-SECRET-KEY-1" + r(BECH, 58).upper()
    add("age_secret_key", "ja", f"age の秘密鍵は {s} です。バックアップしておいてください。", s)
    s = b64(48)
    add(
        "putty_private_key",
        "en",
        f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy@ci\nPublic-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAI{r(AN, 20)}\n{r(AN, 23)}\nPrivate-Lines: 1\n{s}\nPrivate-MAC: {hx(64)}",
        s,
    )
    s = b64(32)
    add(
        "wireguard_private_key",
        "de",
        f"[Interface]\nPrivateKey = {s}\nAddress = 10.8.0.2/24\nDNS = 1.1.1.1\n\n[Peer]\nPublicKey = {b64(32)}\nEndpoint = vpn.example.de:51820\nAllowedIPs = 0.0.0.0/0",
        s,
    )
    s = "-".join(secrets.choice(NAMES).capitalize() for _ in range(3)) + r(DIG, 2)
    add("ssh_passphrase", "es", f"La frase de contraseña de mi clave SSH es «{s}»", s)

    # ---------------------------------------------------------------- OAuth, sessions, JWT
    s = "1//0g" + r(URLSAFE, 99)
    add(
        "oauth_refresh_token",
        "en",
        f'{{"access_token": "ya29.{r(URLSAFE, 150)}", "expires_in": 3599, "refresh_token": "{s}", "scope": "https://www.googleapis.com/auth/drive.readonly", "token_type": "Bearer"}}',
        s,
    )
    s = r(AN, 64)
    add(
        "oauth_refresh_token",
        "fr",
        f"Dans les logs : POST /oauth/token corps=grant_type=refresh_token&refresh_token={s}&client_id=app-web",
        s,
    )
    s = "ya29." + r(URLSAFE, 150)
    add(
        "oauth_access_token",
        "en",
        f"the drive API call fails with 403 even though I send Authorization: Bearer {s}",
        s,
    )
    s = r(URLSAFE, 64)
    add(
        "oauth_client_secret",
        "de",
        f"AUTH0_DOMAIN=firma.eu.auth0.com\nAUTH0_CLIENT_ID={r(AN, 32)}\nAUTH0_CLIENT_SECRET={s}",
        s,
    )
    s = r(LO, 32)
    add(
        "session_cookie",
        "en",
        f"Request headers:\nHost: shop.example.com\nCookie: sessionid={s}; csrftoken={r(AN, 32)}\nUser-Agent: Mozilla/5.0",
        s,
    )
    s = f"s%3A{r(URLSAFE, 32)}.{b64u(32)}"
    add(
        "session_cookie",
        "en",
        f"the express app logs Cookie: connect.sid={s} on every request, is that normal?",
        s,
    )
    s = hx(32).upper()
    add(
        "session_cookie",
        "it",
        f"Nel log vedo Set-Cookie: JSESSIONID={s}; Path=/; Secure; HttpOnly",
        s,
    )
    s = "eyJpdiI6" + r(AN, 200) + "%3D%3D"
    add(
        "session_cookie",
        "pt",
        f"O navegador manda o cookie laravel_session={s} e mesmo assim cai no login",
        s,
    )
    s = hx(128)
    add(
        "rails_secret_key_base",
        "en",
        f"config/credentials.yml.enc decrypted:\nsecret_key_base: {s}\naws:\n  region: eu-west-1",
        s,
    )
    s = "django-insecure-" + r(string.ascii_lowercase + DIG + "!@$%^&*(-_=+)", 50)
    add("django_secret_key", "en", f"# settings.py\nSECRET_KEY = '{s}'\nDEBUG = False", s)
    s = secrets.token_hex(24)
    add(
        "flask_secret_key",
        "es",
        f"En app.py tengo app.config['SECRET_KEY'] = '{s}' y la sesión se pierde",
        s,
    )
    s = r(AN, 48)
    add("jwt_signing_secret", "zh", f"JWT_SECRET={s}  # 别提交到 git", s)
    s = jwt({"sub": "user_8812", "name": "Ada", "iat": 1715500000, "exp": 1715503600})
    add(
        "jwt", "en", f"GET /api/me HTTP/1.1\nAuthorization: Bearer {s}\nAccept: application/json", s
    )
    s = jwt(
        {
            "iss": "kubernetes/serviceaccount",
            "kubernetes.io/serviceaccount/namespace": "prod",
            "kubernetes.io/serviceaccount/service-account.name": "deployer",
            "sub": "system:serviceaccount:prod:deployer",
        },
        "RS256",
    )
    add(
        "k8s_service_account_token",
        "en",
        f"kubectl --server=https://10.0.0.1:6443 --token={s} get pods -n prod",
        s,
    )
    s = jwt(
        {
            "aud": ["https://kubernetes.default.svc"],
            "exp": 1747036800,
            "iss": "https://kubernetes.default.svc",
            "sub": "system:serviceaccount:ci:runner",
        },
        "RS256",
    )
    add(
        "k8s_service_account_token",
        "de",
        f"Das Token aus /var/run/secrets/kubernetes.io/serviceaccount/token ist: {s}",
        s,
    )
    s = pw(18)
    add(
        "k8s_secret_literal",
        "en",
        f"kubectl create secret generic api-creds -n prod --from-literal=username=svc --from-literal=password={s}",
        s,
    )
    s = "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo" + b64(240)
    add(
        "kubeconfig_client_key",
        "en",
        f"users:\n- name: admin\n  user:\n    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM{r(AN, 40)}\n    client-key-data: {s}",
        s,
    )
    s = base64.b64encode(pw(16).encode()).decode()
    add(
        "k8s_secret_manifest",
        "fr",
        f"Mon manifeste :\napiVersion: v1\nkind: Secret\nmetadata:\n  name: smtp\ntype: Opaque\ndata:\n  password: {s}",
        s,
    )
    s = "hvs.CAESI" + r(URLSAFE, 86)
    add(
        "vault_token",
        "en",
        f"export VAULT_ADDR=https://vault.internal:8200\nexport VAULT_TOKEN={s}",
        s,
    )
    s = "hvs." + r(AN, 24)
    add("vault_token", "ja", f"Vault のルートトークン：{s}", s)
    s = b64(33)
    add(
        "vault_unseal_key",
        "en",
        f"Unseal Key 1: {s}\nUnseal Key 2: {b64(33)}\nInitial Root Token: hvs.{r(AN, 24)}",
        s,
    )
    s = base64.b64encode(f"deploy:{r(URLSAFE, 20)}".encode()).decode()
    add(
        "docker_registry_auth",
        "en",
        f'~/.docker/config.json:\n{{\n  "auths": {{\n    "registry.gitlab.com": {{\n      "auth": "{s}"\n    }}\n  }}\n}}',
        s,
    )
    s = r(AN, 32)
    add("docker_registry_password", "es", f"docker login -u deploy -p {s} registry.ejemplo.es", s)
    s = pw(16)
    add(
        "docker_env_password",
        "en",
        f"docker run -d --name pg -e POSTGRES_USER=app -e POSTGRES_PASSWORD={s} -p 5432:5432 postgres:16",
        s,
    )
    s = hx(32)
    add(
        "datadog_api_key",
        "de",
        f"docker run -d -e DD_API_KEY={s} -e DD_SITE=datadoghq.eu datadog/agent:7",
        s,
    )

    # ---------------------------------------------------------------- package registries, git hosts
    s = "npm_" + r(AN, 36)
    add("npm_token", "en", f"my .npmrc:\n//registry.npmjs.org/:_authToken={s}\nalways-auth=true", s)
    s = "npm_" + r(AN, 36)
    add("npm_token", "zh", f"NPM_TOKEN 是 {s}，CI 里要用", s)
    s = "pypi-AgEIcHlwaS5vcmcCJ" + r(URLSAFE, 150)
    add(
        "pypi_token",
        "en",
        f"[distutils]\nindex-servers = pypi\n\n[pypi]\n  username = __token__\n  password = {s}",
        s,
    )
    s = "pypi-AgENdGVzdC5weXBpLm9yZw" + r(URLSAFE, 120)
    add("pypi_token", "fr", f"twine upload --repository testpypi -u __token__ -p {s} dist/*", s)
    s = "cio" + r(AN, 32)
    add("cargo_token", "en", f"cargo login {s}", s)
    s = "cio" + r(AN, 32)
    add("cargo_token", "de", f'~/.cargo/credentials.toml:\n[registry]\ntoken = "{s}"', s)
    s = "rubygems_" + hx(48)
    add("rubygems_key", "en", f"GEM_HOST_API_KEY: {s}", s)
    s = "oy2" + r(LO, 43)
    add(
        "nuget_key",
        "it",
        f"dotnet nuget push Pacchetto.1.2.0.nupkg --api-key {s} --source https://api.nuget.org/v3/index.json",
        s,
    )
    s = f"github_pat_{r(AN, 22)}_{r(AN, 59)}"
    add(
        "git_remote_token",
        "en",
        f"git remote set-url origin https://x-access-token:{s}@github.com/acme/api.git",
        s,
    )
    s = "glpat-" + r(URLSAFE, 20)
    add("git_remote_token", "en", f"git clone https://oauth2:{s}@gitlab.com/acme/infra.git", s)
    s = "ATBB" + r(AN, 32)
    add(
        "git_remote_token",
        "pt",
        f"git remote add origin https://joao:{s}@bitbucket.org/empresa/app.git",
        s,
    )
    s = hx(40)
    add(
        "gitea_token",
        "en",
        f"tea login add --name work --url https://git.example.org --token {s}",
        s,
    )

    # ---------------------------------------------------------------- SaaS API keys
    s = hx(40)
    add(
        "datadog_app_key",
        "en",
        f'from datadog_api_client import Configuration\nconfiguration = Configuration()\nconfiguration.api_key["appKeyAuth"] = "{s}"',
        s,
    )
    s = hx(32)
    add("datadog_api_key", "fr", f"Clé API Datadog -> {s}", s)
    s = hx(32)
    add(
        "sentry_dsn",
        "en",
        f'sentry_sdk.init(dsn="https://{s}@o{r(DIG, 6)}.ingest.sentry.io/{r(DIG, 7)}", traces_sample_rate=0.2)',
        s,
    )
    s = hx(32)
    add(
        "sentry_dsn",
        "es",
        f"SENTRY_DSN=https://{s}@o{r(DIG, 6)}.ingest.us.sentry.io/{r(DIG, 7)}",
        s,
    )
    s = (
        "sntrys_"
        + b64j(
            {
                "iat": 1715500000.1,
                "url": "https://sentry.io",
                "region_url": "https://us.sentry.io",
                "org": "acme",
            }
        )
        + "_"
        + r(AN + "/+", 43)
    )
    add("sentry_auth_token", "en", f"SENTRY_AUTH_TOKEN={s} sentry-cli releases new 1.4.2", s)
    s = "lin_api_" + r(AN, 40)
    add("linear_api_key", "en", f'const linear = new LinearClient({{ apiKey: "{s}" }});', s)
    s = "lin_api_" + r(AN, 40)
    add("linear_api_key", "de", f"Mein Linear-API-Schlüssel: {s}", s)
    s = "secret_" + r(AN, 43)
    add("notion_token", "en", f"NOTION_TOKEN={s}\nNOTION_DATABASE_ID={hx(32)}", s)
    s = "ntn_" + r(DIG, 11) + r(AN, 35)
    add("notion_token", "ja", f"Notion のインテグレーショントークンは {s} です", s)
    s = f"pat{r(AN, 14)}.{hx(64)}"
    add(
        "airtable_token",
        "en",
        f'curl "https://api.airtable.com/v0/app{r(AN, 14)}/Tasks" -H "Authorization: Bearer {s}"',
        s,
    )
    s = f"pat{r(AN, 14)}.{hx(64)}"
    add("airtable_token", "it", f"Il mio token Airtable = {s}", s)
    s = hx(32)
    add(
        "twilio_auth_token",
        "en",
        f'from twilio.rest import Client\nclient = Client("AC{hx(32)}", "{s}")',
        s,
    )
    s = hx(32)
    add("twilio_auth_token", "es", f"TWILIO_ACCOUNT_SID: AC{hx(32)}\nTWILIO_AUTH_TOKEN: {s}", s)
    s = r(AN, 32)
    add(
        "twilio_api_secret",
        "pt",
        f"Criei a API Key SK{hx(32)} com o secret {s} no console da Twilio",
        s,
    )
    s = "sk." + b64j({"u": "acme-maps", "a": "cl" + r(LO, 23)}) + "." + r(URLSAFE, 22)
    add("mapbox_secret_token", "en", f"MAPBOX_DOWNLOADS_TOKEN={s}", s)
    s = "sk." + b64j({"u": "cartes-lyon", "a": "cl" + r(LO, 23)}) + "." + r(URLSAFE, 22)
    add("mapbox_secret_token", "fr", f"Le jeton secret Mapbox : {s}", s)
    s = hx(32)
    add(
        "algolia_admin_key",
        "en",
        f"const client = algoliasearch('{r(UP, 10)}', '{s}');\nconst index = client.initIndex('products');",
        s,
    )
    s = hx(32)
    add("algolia_admin_key", "zh", f"Algolia 的 Admin API Key：{s}，App ID 是 {r(UP, 10)}", s)
    s = f"xoxb-{r(DIG, 12)}-{r(DIG, 13)}-{r(AN, 24)}"
    add("slack_bot_token", "en", f"SLACK_BOT_TOKEN={s}", s)
    s = r(AN, 24)
    add(
        "slack_webhook",
        "en",
        f"curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"deploy done\"}}' https://hooks.slack.com/services/T{r(UP, 8)}/B{r(UP, 10)}/{s}",
        s,
    )
    s = r(URLSAFE, 68)
    add(
        "discord_webhook",
        "de",
        f"Discord-Webhook für den Build-Kanal: https://discord.com/api/webhooks/{r(DIG, 19)}/{s}",
        s,
    )
    s = r(LO, 26)
    add(
        "mattermost_webhook",
        "en",
        f"post the alert to https://chat.example.com/hooks/{s} please",
        s,
    )
    s = f"{r(DIG, 10)}:AA{r(URLSAFE, 33)}"
    add("telegram_bot_token", "es", f"El token del bot de Telegram: {s}", s)
    s = f"{b64j(int(r(DIG, 18)))}.{r(URLSAFE, 6)}.{r(URLSAFE, 38)}"
    add("discord_bot_token", "en", f"client.login('{s}');", s)
    s = f"SG.{r(URLSAFE, 22)}.{r(URLSAFE, 43)}"
    add("sendgrid_key", "en", f"export SENDGRID_API_KEY='{s}'", s)
    s = "key-" + hx(32)
    add(
        "mailgun_key",
        "fr",
        f"curl -s --user 'api:{s}' https://api.eu.mailgun.net/v3/mg.exemple.fr/messages -F from=contact@exemple.fr",
        s,
    )
    s = uid()
    add("postmark_token", "en", f"X-Postmark-Server-Token: {s}", s)
    s = "shpat_" + hx(32)
    add("shopify_token", "en", f'requests.get(url, headers={{"X-Shopify-Access-Token": "{s}"}})', s)
    s = "hf_" + r(AN, 34)
    add("huggingface_token", "en", f"huggingface-cli login --token {s}", s)
    s = "hf_" + r(AN, 34)
    add("huggingface_token", "zh", f"我的 HF token：{s}", s)
    s = "r8_" + r(AN, 37)
    add("replicate_token", "en", f"REPLICATE_API_TOKEN={s}", s)
    s = f"glsa_{r(AN, 32)}_{hx(8)}"
    add(
        "grafana_token",
        "en",
        f"the grafana service account token {s} stopped working after the upgrade",
        s,
    )
    s = "NRAK-" + r(UP, 27)
    add("newrelic_key", "de", f"NEW_RELIC_API_KEY={s}", s)
    s = hx(32)
    add("pagerduty_key", "en", f"PagerDuty integration key: {s}", s)
    s = "00" + r(URLSAFE, 40)
    add(
        "okta_token",
        "en",
        f"curl -H 'Authorization: SSWS {s}' https://acme.okta.com/api/v1/users?limit=25",
        s,
    )
    s = "ATATT3xFfGF0" + r(URLSAFE, 180) + "=" + hx(8).upper()
    add("atlassian_token", "en", f"JIRA_API_TOKEN={s}", s)
    s = "figd_" + r(URLSAFE, 40)
    add("figma_token", "es", f"Token personal de Figma: {s}", s)
    s = f"PMAK-{hx(24)}-{hx(34)}"
    add("postman_key", "pt", f"Minha chave da API do Postman é {s}", s)
    s = "EAAA" + r(URLSAFE, 60)
    add("square_token", "en", f"SQUARE_ACCESS_TOKEN={s}", s)
    s = r(AN, 24)
    add("razorpay_secret", "en", f"key_id: rzp_live_{r(AN, 14)}\nkey_secret: {s}", s)
    s = "live_" + r(AN, 30)
    add("mollie_key", "de", f"Mollie-API-Key: {s}", s)
    s = f"access_token$production${r(LO, 16)}${hx(32)}"
    add("braintree_token", "en", f"BRAINTREE_ACCESS_TOKEN={s}", s)
    s = hx(30)
    add("plaid_secret", "en", f'PLAID_CLIENT_ID="{hx(24)}"\nPLAID_SECRET="{s}"', s)
    s = r(AN, 64)
    add("binance_secret", "ja", f"Binance の API シークレット：{s}", s)
    s = "E" + r(URLSAFE, 79)
    add(
        "paypal_client_secret",
        "it",
        f"PAYPAL_CLIENT_ID=A{r(URLSAFE, 79)}\nPAYPAL_CLIENT_SECRET={s}",
        s,
    )
    s = "CFPAT-" + r(URLSAFE, 43)
    add("contentful_token", "en", f"contentful login --management-token {s}", s)
    s = "sdk-" + uid()
    add("launchdarkly_key", "en", f'ld_client = ldclient.LDClient(Config("{s}"))', s)
    s = r(AN, 32)
    add(
        "segment_write_key",
        "fr",
        f'analytics.load("{s}"); // clé d\'écriture Segment du site de prod',
        s,
    )
    s = jwt(
        {
            "iss": "supabase",
            "ref": r(LO, 20),
            "role": "service_role",
            "iat": 1715500000,
            "exp": 2031076000,
        }
    )
    add("supabase_service_key", "en", f"SUPABASE_SERVICE_ROLE_KEY={s}", s)
    s = f"AAAA{r(URLSAFE, 7)}:APA91b{r(URLSAFE, 134)}"
    add("firebase_server_key", "pt", f"Chave do servidor FCM: {s}", s)
    s = "dp.st.prd." + r(AN, 43)
    add("doppler_token", "en", f"DOPPLER_TOKEN={s} doppler run -- npm start", s)
    s = f"{r(AN, 14)}.atlasv1.{r(AN, 67)}"
    add(
        "terraform_cloud_token",
        "de",
        f'~/.terraformrc:\ncredentials "app.terraform.io" {{\n  token = "{s}"\n}}',
        s,
    )
    s = "pul-" + hx(40)
    add("pulumi_token", "en", f"PULUMI_ACCESS_TOKEN={s} pulumi up --yes", s)
    s = f"CCIPAT_{r(AN, 22)}_{hx(40)}"
    add("circleci_token", "en", f"curl -H 'Circle-Token: {s}' https://circleci.com/api/v2/me", s)
    s = "AKCp" + r(AN, 69)
    add(
        "jfrog_api_key",
        "en",
        f"curl -H 'X-JFrog-Art-Api: {s}' https://acme.jfrog.io/artifactory/api/repositories",
        s,
    )
    s = "squ_" + hx(40)
    add("sonarqube_token", "it", f"sonar-scanner -Dsonar.projectKey=app -Dsonar.token={s}", s)
    s = uid()
    add("snyk_token", "en", f"SNYK_TOKEN={s} snyk test --all-projects", s)
    s = "sl.B" + r(URLSAFE, 135)
    add("dropbox_token", "es", f"El token de acceso de Dropbox es {s}", s)
    s = "11" + hx(32)
    add(
        "jenkins_token",
        "de",
        f"curl -X POST -u admin:{s} https://jenkins.firma.de/job/build/buildWithParameters",
        s,
    )
    s = r(URLSAFE, 43)
    add("meilisearch_master_key", "en", f"```env\nAPP_ENV=production\nMEILI_MASTER_KEY={s}\n```", s)
    s = f"APP_USR-{r(DIG, 16)}-{r(DIG, 6)}-{hx(32)}-{r(DIG, 9)}"
    add("mercadopago_token", "pt", f"O access token do Mercado Pago é {s}", s)

    # ---------------------------------------------------------------- generic keys and secrets
    s = r(AN, 32)
    add("api_key_label", "zh", f"这是我们的 API 密钥：{s}，调用天气接口用的", s)
    s = r(AN, 40)
    add("api_key_label", "ja", f"APIキー => {s}", s)
    s = hx(32)
    add("api_key_label", "it", f"chiave API: {s}", s)
    s = r(AN, 40)
    add("api_key_header", "es", f"curl -H 'X-API-Key: {s}' https://api.ejemplo.es/v2/pedidos", s)
    s = "base64:" + b64(32)
    add(
        "laravel_app_key",
        "en",
        f"APP_NAME=Shop\nAPP_ENV=production\nAPP_KEY={s}\nAPP_DEBUG=false",
        s,
    )
    s = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()
    add("fernet_key", "en", f"from cryptography.fernet import Fernet\nf = Fernet(b'{s}')", s)
    s = hx(64)
    add("aes_key", "en", f'key, _ := hex.DecodeString("{s}") // AES-256 key for the backups', s)
    s = hx(40)
    add(
        "webhook_secret",
        "en",
        f"the GitHub webhook secret is {s}, the payload signature check fails",
        s,
    )
    s = "whsec_" + b64(24)
    add("webhook_secret", "fr", f"WEBHOOK_SIGNING_SECRET={s}", s)
    s = r(AN, 32)
    add(
        "client_secret_toml",
        "ja",
        f'設定ファイル：\n```toml\n[auth]\nclient_id = "web-app"\nclient_secret = "{s}"\n```',
        s,
    )
    s = pw(20)
    add(
        "ansible_vault_password",
        "en",
        f"ansible-playbook site.yml -i prod --vault-password-file <(echo '{s}')",
        s,
    )

    # ---------------------------------------------------------------- signed URLs
    s = hx(64)
    add(
        "signed_url",
        "en",
        f"the export link is https://acme-exports.s3.eu-west-1.amazonaws.com/report.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=ASIA{r(UP, 16)}%2F20240512%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Date=20240512T101500Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature={s}",
        s,
    )
    s = hx(256)
    add(
        "signed_url",
        "fr",
        f"Lien de téléchargement : https://storage.googleapis.com/factures/2024-05.pdf?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=export%40projet.iam.gserviceaccount.com%2F20240512%2Fauto%2Fstorage%2Fgoog4_request&X-Goog-Date=20240512T101500Z&X-Goog-Expires=900&X-Goog-SignedHeaders=host&X-Goog-Signature={s}",
        s,
    )
    s = urllib.parse.quote(b64(32), safe="")
    add(
        "signed_url",
        "de",
        f"SAS-Link fürs Backup: https://speicher.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2024-06-01T00:00:00Z&st=2024-05-01T00:00:00Z&spr=https&sig={s}",
        s,
    )
    s = r(AN + "~-_", 344)
    add(
        "signed_url",
        "en",
        f"https://d111111abcdef8.cloudfront.net/videos/intro.mp4?Expires=1716000000&Signature={s}&Key-Pair-Id=K{r(UP, 13)}",
        s,
    )
    s = r(AN, 40)
    add(
        "signed_url",
        "pt",
        f"Segue o link da fatura: https://downloads.exemplo.com.br/fatura.pdf?token={s}&expires=1716000000",
        s,
    )

    # ---------------------------------------------------------------- 2FA, recovery, seeds
    s = r(B32, 32)
    add(
        "totp_seed", "en", f"otpauth://totp/Acme:ada@example.com?secret={s}&issuer=Acme&digits=6", s
    )
    raw = r(B32, 32).lower()
    s = " ".join(raw[i : i + 4] for i in range(0, 32, 4))
    add("totp_seed", "de", f"Der 2FA-Schlüssel für mein Konto ist {s}", s)
    s = r(B32, 16)
    add("totp_seed", "zh", f"两步验证的密钥：{s}", s)
    codes = [f"{hx(5)}-{hx(5)}" for _ in range(8)]
    add(
        "recovery_code",
        "en",
        "GitHub recovery codes, keep them safe:\n" + "\n".join(codes),
        codes[2],
    )
    codes = [f"{r(DIG, 4)} {r(DIG, 4)}" for _ in range(5)]
    add("recovery_code", "fr", "Mes codes de secours Google : " + ", ".join(codes), codes[1])
    s = r(DIG, 8)
    add("recovery_code", "ja", f"バックアップコード：{s}", s)
    s = words(12)
    add("seed_phrase", "en", f"my metamask seed phrase is {s}", s)
    s = words(12)
    add("seed_phrase", "es", f"Frase de recuperación de la billetera: {s}", s)
    s = words(12)
    add("seed_phrase", "zh", f"助记词：{s}", s)
    s = words(24)
    add(
        "seed_phrase",
        "de",
        f"Hier meine 24 Wörter für die Ledger, bitte sicher aufbewahren: {s}",
        s,
    )
    s = words(12)
    add("seed_phrase", "it", f"Queste sono le parole di recupero del wallet: {s}", s)

    # ---------------------------------------------------------------- Wi-Fi, PINs, door codes
    s = human_pw()
    add("wifi_password", "en", f"the wifi password is {s}", s)
    s = r(AN, 10)
    add("wifi_password", "zh", f"Wi-Fi 密码是 {s}", s)
    s = r(AN, 12)
    add("wifi_password", "fr", f"Le code Wi-Fi de la maison : {s}", s)
    s = r(AN, 12)
    add("wifi_password", "ja", f"WiFi のパスワードは {s} です", s)
    s = r(AN, 12)
    add("wifi_password", "it", f"La password del Wi-Fi dell'ufficio è {s}", s)
    s = pw(16)
    add(
        "wifi_password",
        "en",
        f'/etc/wpa_supplicant.conf:\nnetwork={{\n    ssid="HomeNet-5G"\n    psk="{s}"\n}}',
        s,
    )
    s = r(DIG, 4)
    add("bank_pin", "en", f"my debit card PIN is {s}, write it down somewhere safe for me", s)
    s = r(DIG, 4)
    add("bank_pin", "de", f"Die PIN meiner EC-Karte lautet {s}.", s)
    s = r(DIG, 4)
    add("bank_pin", "es", f"El PIN de mi tarjeta es {s}", s)
    s = r(DIG, 6)
    add("bank_pin", "pt", f"A senha do cartão do banco é {s}", s)
    s = r(DIG, 6)
    add("bank_pin", "zh", f"我的银行卡密码是{s}", s)
    s = r(DIG, 4)
    add("bank_pin", "ja", f"キャッシュカードの暗証番号は{s}です", s)
    s = r(DIG, 4)
    add("door_code", "en", f"the door code for the building is {s}# and the mailbox is 12", s)
    s = secrets.choice("ABC") + r(DIG, 4)
    add("door_code", "fr", f"Le digicode de l'immeuble : {s}", s)
    s = r(DIG, 5)
    add("door_code", "it", f"Il codice del portone è {s}", s)
    s = r(DIG, 6)
    add("door_code", "de", f"Der Türcode für das Büro ist {s}", s)
    s = r(DIG, 4)
    add("alarm_code", "es", f"El código de la alarma de casa es {s}", s)
    s = r(DIG, 4)
    add("lock_combination", "pt", f"A combinação do cadeado da bicicleta é {s}", s)

    # ---------------------------------------------------------------- passwords, all forms
    s = human_pw()
    add("password_prose", "en", f"my password for the VPN is {s}", s)
    s = pw(12)
    add("password_label", "zh", f"邮箱密码：{s}", s)
    s = pw(12)
    add("password_label", "de", f"Zugangsdaten fürs Portal – Benutzer: m.keller, Passwort: {s}", s)
    s = pw(12)
    add("password_label", "fr", f"identifiant : claire.d / mot de passe : {s}", s)
    s = human_pw()
    add("password_label", "es", f"usuario: lgarcia, contraseña: {s}", s)
    s = pw(12)
    add("password_label", "ja", f"ログイン情報です。ID：tanaka パスワード：{s}", s)
    s = human_pw()
    add("password_prose", "it", f"la mia password di Netflix è {s}", s)
    s = human_pw()
    add("password_prose", "pt", f"minha senha do e-mail é {s}", s)
    s = pw(16)
    add(
        "password_ini",
        "en",
        f"[smtp]\nhost = smtp.example.com\nport = 587\nuser = noreply@example.com\npass = {s}",
        s,
    )
    s = pw(16)
    add(
        "password_xml",
        "de",
        f"<settings>\n  <servers>\n    <server>\n      <id>nexus</id>\n      <username>deploy</username>\n      <password>{s}</password>\n    </server>\n  </servers>\n</settings>",
        s,
    )
    s = upw(14)
    add(
        "password_go",
        "en",
        f'db, err := sql.Open("postgres", "host=pg user=app password={s} dbname=app sslmode=disable")',
        s,
    )
    s = pw(14)
    add(
        "password_js",
        "de",
        f"const transporter = nodemailer.createTransport({{ host: 'smtp.firma.de', auth: {{ user: 'info@firma.de', pass: '{s}' }} }});",
        s,
    )
    s = pw(14)
    add(
        "password_python",
        "en",
        f"client = paramiko.SSHClient()\nclient.connect('10.0.0.7', username='deploy', password='{s}')",
        s,
    )
    s = pw(14)
    add(
        "password_log",
        "en",
        f"2024-05-12 10:01:22,118 DEBUG app.auth login payload={{'username': 'ada', 'password': '{s}', 'remember': True}}",
        s,
    )
    s = pw(14)
    add("netrc_password", "en", f"~/.netrc:\nmachine ftp.example.org login ada password {s}", s)
    s = " ".join(r(string.ascii_lowercase, 4) for _ in range(4))
    add("app_password", "en", f"gmail app password: {s}", s)
    s = "-".join(r(string.ascii_lowercase, 4) for _ in range(4))
    add("app_password", "pt", f"Senha de app da Apple para o Thunderbird: {s}", s)
    s = pw(14)
    add(
        "password_yaml",
        "pt",
        f"environment:\n  - MINIO_ROOT_USER=admin\n  - MINIO_ROOT_PASSWORD={s}",
        s,
    )
    s = pw(16)
    add("password_positional", "it", f"mc alias set myminio http://minio:9000 admin {s}", s)
    s = pw(14)
    add(
        "ldap_password",
        "fr",
        f"ldapsearch -x -D 'cn=admin,dc=exemple,dc=fr' -w '{s}' -H ldap://ldap.exemple.fr -b 'dc=exemple,dc=fr'",
        s,
    )
    s = r(AN, 16)
    add("snmp_community", "en", f"snmpwalk -v2c -c {s} 192.168.1.1 system", s)
    s = pw(12)
    add("router_password", "es", f"El usuario del router es admin y la clave {s}", s)
    s = upw(14)
    add("ftp_url", "it", f"Carica i file su ftp://utente:{s}@ftp.esempio.it/backup/ stasera", s)
    s = pw(14)
    add(
        "smb_password",
        "de",
        f"sudo mount -t cifs //nas/share /mnt/nas -o username=max,password={s},vers=3.0",
        s,
    )
    s = pw(14)
    add(
        "sshpass_password",
        "en",
        f"sshpass -p '{s}' ssh -o StrictHostKeyChecking=no root@203.0.113.10",
        s,
    )
    s = pw(14)
    add(
        "keystore_password",
        "en",
        f"keystore.properties:\nstoreFile=release.jks\nstorePassword={s}\nkeyAlias=upload\nkeyPassword={pw(14)}",
        s,
    )
    s = upw(12)
    add("basic_auth_url", "en", f"curl https://admin:{s}@router.local/cgi-bin/status", s)
    s = pw(14)
    add("password_arrow", "es", f"credenciales del FTP: usuario -> ventas, clave -> {s}", s)
    s = pw(12)
    add("password_fullwidth", "zh", f"服务器 root 密码：{s}", s)
    s = pw(12)
    add("password_label", "it", f"Credenziali VPN\nutente: rossi.m\npassword: {s}", s)
    s = pw(12)
    add("password_label", "ja", f"管理画面の password は {s} です", s)
    s = human_pw()
    add(
        "password_prose",
        "de",
        f"Mein Passwort für das Firmenportal ist {s}, kannst du dich für mich einloggen?",
        s,
    )
    s = human_pw()
    add("password_prose", "fr", f"Mon mot de passe Free est {s}", s)
    s = human_pw()
    add("password_prose", "es", f"Mi contraseña del banco es {s}, recuérdala por favor", s)
    s = human_pw()
    add("password_prose", "zh", f"我的 QQ 密码是 {s}", s)
    s = pw(14)
    add(
        "password_json",
        "it",
        f'{{"host": "smtp.esempio.it", "utente": "noreply", "password": "{s}"}}',
        s,
    )
    s = pw(14)
    add("password_pt_label", "pt", f"Usuário: joao.silva | Senha: {s}", s)


def main() -> None:
    build()
    out = Path(__file__).with_name("positives.jsonl")
    with out.open("w", encoding="utf-8") as fh:
        for item in E:
            fh.write(json.dumps(item, ensure_ascii=False) + "\n")
    print(f"{len(E)} positives -> {out}")


if __name__ == "__main__":
    main()
