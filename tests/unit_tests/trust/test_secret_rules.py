"""The detector's rules for the groups the second corpus first found missing.

Short codes after a code word in eight languages, recovery-code lists, 4-character
groups (app passwords, 2FA seeds), seed phrases in a wallet's context, a hex key as a
URL's user name, a key passed to an SDK client, and a few provider formats. The
examples are written here, not taken from the corpora; each rule has negatives
that must stay unchanged (the corpora measure the rules as a whole).
"""

from __future__ import annotations

import pytest

from langmem_layers.safety.redaction import REDACTED, is_secret_key, redact_text

_SEED = "orbit canyon velvet hollow margin pepper tunnel glide sniff cabin forest lunar"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        # codes after a code word
        ("Der Garagencode ist 5521", "5521"),
        ("Le digicode du parking : B7290", "B7290"),
        ("El código de la puerta es 7719", "7719"),
        ("Il codice del cancello è 40418", "40418"),
        ("O código do portão é 2580", "2580"),
        ("A combinação do cofre é 31-07-19", "31-07-19"),
        ("La combinaison du cadenas est 4471", "4471"),
        ("Die PIN unserer Kreditkarte lautet 6020", "6020"),
        ("銀行カードの暗証番号は7306です", "7306"),
        ("小区门禁码：880217", "880217"),
        ("the keypad code for the shed is 90210", "90210"),
        # recovery-code lists
        ("GitHub recovery codes: 4f2a1-9c3b0 77e1d-0b9a2 c4d5e-6f7a8", "77e1d-0b9a2"),
        ("Códigos de respaldo de Google: 8123 4410, 5521 9902", "5521 9902"),
        ("リカバリーコード: 1822-3349", "1822-3349"),
        # 4-character groups after a label
        ("Outlook app password: wxyz abcd efgh ijkl", "wxyz abcd efgh ijkl"),
        ("TOTP secret is JBSW Y3DP EHPK 3PXP", "JBSW Y3DP EHPK 3PXP"),
        ("Mein 2FA-Schlüssel ist k3qz-7mra-pv2e-ws5t", "k3qz-7mra-pv2e-ws5t"),
        # prose in Italian and Portuguese, keys with an adjective after the noun
        ("la mia password della banca è Gatto77!Luna", "Gatto77!Luna"),
        ("minha senha do Wi-Fi é Casa_Azul_2024", "Casa_Azul_2024"),
        ("chiave segreta: 8a1f3c0d9b2e4a6f7c8d9e0f1a2b3c4d", "8a1f3c0d9b2e4a6f7c8d9e0f1a2b3c4d"),
        (
            "Chave mestre da conta: 9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a",
            "9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a",
        ),
        ("the deploy token for the registry is Qw+[rT:yUiOpAsDf", "Qw+[rT:yUiOpAsDf"),
        # seed phrases in a wallet's context
        (f"my MetaMask recovery words: {_SEED}", _SEED),
        (f"钱包助记词：{_SEED}", _SEED),
        (f"Wallet backup\n{_SEED}\n", _SEED),
        # a URL whose user name is a hex key; a key given to an SDK client
        ("dsn = 'https://0f1e2d3c4b5a69788796a5b4c3d2e1f0@errors.example.io/42'", "0f1e2d3c"),
        ('c = PaymentClient("merchant-4411", "c0ffee00deadbeef0123456789abcdef")', "c0ffee00dead"),
        ("index = searchClient('APPX19', 'f00dbabe11223344556677889900aabb')", "f00dbabe1122"),
        # commands and formats
        ("ldapwhoami -x -D cn=admin,dc=ex,dc=org -w 'Ld4p!Bind'", "Ld4p!Bind"),
        ("snmpget -v2c -c Comm7unityStr 10.0.0.1 sysName.0", "Comm7unityStr"),
        ("mc alias set backup https://s3.example.org AKX0001 'Sk/9x8y7z6w5v4u3'", "Sk/9x8y7z"),
        ("htpasswd -b .htpasswd alice W0nderland!", "W0nderland!"),
        ('dsn := "svc:Go_Pa55wd@tcp(mysql:3306)/app"', "Go_Pa55wd"),
        ("ansible-vault view x.yml --vault-password-file <(echo 'Vault#Pass-77')", "Vault#Pass-77"),
        ("[mail]\nuser = bot\npass = Qz7%kLm2!xR", "Qz7%kLm2!xR"),
        ("sonar.token=sqp_" + "1a2b3c4d5e" * 4, "sqp_1a2b3c4d5e"),
        ("ldclient.set_config(Config('mob-12345678-abcd-4ef0-9abc-def012345678'))", "mob-1234"),
        ("curl -H 'Authorization: Bearer patAbCdEfGhIjKlMn." + "ab12" * 16 + "'", "patAbCdEf"),
        ("MP_TOKEN=APP_USR-1234567890123456-112233-" + "ab" * 16 + "-123456789", "APP_USR-1234"),
        # Dutch, Russian, reverse forms, CJK keys (added after the third corpus)
        ("Het wachtwoord van de router is Fiets!2024", "Fiets!2024"),
        ("De pincode van mijn bankpas is 3318", "3318"),
        ("ПИН-код от карты: 4417", "4417"),
        ("Код домофона — 5590", "5590"),
        ("Sunflower#77, c'est mon mot de passe", "Sunflower#77"),
        ("Mela77!Rossa è la password del wifi", "Mela77!Rossa"),
        ("Kater_2019 is mijn wachtwoord", "Kater_2019"),
        ("8899就是我家的门禁密码", "8899"),
        ("アプリのシークレットは 0a1b2c3d4e5f60718293a4b5c6d7e8f9 です", "0a1b2c3d4e5f6071"),
        ("API 키가 9f8e7d6c5b4a39281706f5e4d3c2b1a0 입니다", "9f8e7d6c5b4a3928"),
        ("4471# is the door code for the shed", "4471"),
        ("Der Code für das Garagentor ist 7391", "7391"),
        ("Authorization: Splunk 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "0f1e2d3c-4b5a"),
        ("net use Y: \\\\nas\\media Kx9!pLm2 /user:home\\ada", "Kx9!pLm2"),
        ("mosquitto_sub -h broker -t x -u bot -P 'Mq77#broker'", "Mq77#broker"),
        ("recovery: 123456-234567-345678-456789-567890-678901-789012-890123", "123456-234567"),
    ],
)
def test_the_secret_is_gone(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out, out
    assert REDACTED in out


@pytest.mark.parametrize(
    "text",
    [
        "The error code is 404 and the promo code is SUMMER2024",
        "Backup codes were generated on 2024-05-01 at 10:30, keep them safe",
        "I printed my recovery codes and put them in the drawer",
        "Mes codes de secours sont dans mon tiroir depuis 2021",
        "バックアップコードは10個あります",
        "キャッシュカードの暗証番号は4桁です",
        "Der Türcode hat sechs Ziffern",
        "A combinação tem quatro dígitos",
        "Il codice del prodotto è 88330",
        "Le code postal de la maison : 75011",
        "La chiave del successo è la pazienza",
        "Chave da casa está na mesa",
        "my app password: the one from yesterday",
        "the app password must be four groups of four letters",
        "resp = client.get('users', '5f2b8c9d1e3a4b5c6d7e8f90')",
        "db = connect('localhost', 'shop_production_database')",
        "Client('en-US', 'America/New_York')",
        "the wallet has enough money for lunch with friends after work today maybe",
        "My crypto portfolio grew this year because bitcoin went up again",
        "wallet: the list of things that we need from the shop are there with them",
        "seed the database with these tables first then run every migration again",
        "the sentry DSN goes in SENTRY_DSN, see https://docs.sentry.io/platforms/python/",
        "pass = True",
        "snmpwalk -v2c -c $COMMUNITY 10.0.0.1",
        "mysql --defaults-file=~/.my.cnf shop",
        "Ti chiedo la combinazione dei colori per il salotto",
        "Код ошибки 404 появляется при входе",
        "Код товара: 44512, цвет синий",
        "PUK-код нужен только при блокировке SIM",
        "the door code changed last week, ask Ana",
        "Het wachtwoord moet minstens 12 tekens hebben",
        "API 키는 설정 페이지에서 만들 수 있어요",
        "Authorization: Splunk $HEC_TOKEN",
        "The tx hash is 0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060",
    ],
)
def test_ordinary_text_is_kept(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(
    ("name", "secret"),
    [("public_key", False), ("hostKey", False), ("authorized_keys", False),
     ("known_hosts", False), ("host_password", True), ("public_token", True),
     ("pub_secret", True), ("api_key", True)],
)  # fmt: skip
def test_public_key_names_are_not_secret_names(name: str, secret: bool) -> None:
    assert is_secret_key(name) is secret
